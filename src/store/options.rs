//! Store options: the settings of remote stores (endpoint, credentials, timeouts, retries, concurrency)
//! that a caller gives explicitly, on top of the standard environment (`AWS_*`). C callers build them
//! with `zarr_store_options_*` (src/ffi/store_options.rs) and pass them to the `*_with_options` calls;
//! [`super::open_location_with`] hands them to the store the location names. Local stores ignore them,
//! except `confine`, which the filesystem store reads (every access below its root, see
//! [`super::filesystem::FilesystemStore::with_confine`]), and `max_metadata_bytes`, the metadata
//! ceiling of a store of any kind (see [`super::Store::max_metadata_bytes`]).

use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::time::Duration;

/// The keys a caller may set, each with what its value must be.
pub const KEYS: &[(&str, &str)] = &[
    ("endpoint", "S3 endpoint URL of an S3-compatible server, e.g. http://127.0.0.1:9000"),
    ("region", "S3 region, e.g. us-east-1"),
    ("access_key_id", "S3 access key id"),
    ("secret_access_key", "S3 secret access key"),
    ("session_token", "S3 session token (temporary credentials)"),
    ("path_style", "true: path-style requests (endpoint/bucket/key); false: virtual-hosted (bucket.endpoint/key)"),
    ("allow_http", "true: allow plain http:// endpoints for S3"),
    ("anonymous", "true: unsigned requests (public buckets), even when credentials are set"),
    ("timeout_ms", "time limit of one request in milliseconds (default 30000)"),
    ("connect_timeout_ms", "time limit to connect in milliseconds (default 5000)"),
    ("retries", "retries of a failed request (transient errors: 5xx, connection errors, timeouts; default 3)"),
    ("max_concurrency", "requests in flight at once, for all threads of the process together (default 64, or ZARR_REMOTE_CONCURRENCY; 1..1024)"),
    ("conditional_put", "false: writes covering part of a chunk or shard on S3 use plain PUTs (last writer wins) instead of conditional ones (If-Match / If-None-Match, retried on a lost race; default true)"),
    ("multipart_threshold", "values larger than this many bytes are uploaded in parts (default 16 MiB, >= 5 MiB)"),
    ("confine", "true: a filesystem store never reads, writes, lists, locks, deletes or moves anything outside its root: a symbolic link leading out of it is refused (ZARR_ERR_IO); for stores from untrusted sources (default false, or ZARR_CONFINE=1)"),
    ("multipart_part_size", "bytes per part of a multipart upload, all parts in flight at once up to max_concurrency (default 8 MiB, 5 MiB..=5 GiB)"),
    ("latency_ms", "remote stores: the round-trip latency to assume in milliseconds (decimals allowed), instead of the one learned from the handle's requests (docs/remote-stores.md)"),
    ("bandwidth_bytes_per_s", "remote stores: the bandwidth of one answer to assume in bytes per second, instead of the one learned from the handle's requests"),
    ("speculative_read_max", "remote stores: the most bytes a shard's first read fetches beyond its index to save a round trip (default 8 MiB; 0: only what is needed; at most 1 GiB)"),
    ("max_metadata_bytes", "the metadata ceiling of this store: the most bytes one metadata document (zarr.json, .zarray, .zattrs, .zmetadata, ...) may have, checked before it is read (ZARR_ERR_MEMORY); also bounds its JSON values, one per 128 bytes (default ZARR_MAX_METADATA_BYTES, else 64 MiB; 1..=2^48; docs/limits.md)"),
    ("reference_target", "reference:// locations: the target URL of references whose URL is null (fsspec's default target)"),
    ("icechunk_authorize_virtual", "icechunk:// locations: the URL prefixes (comma-separated) of the repository's virtual chunk containers whose files may be read (default none: a virtual chunk is then ZARR_ERR_IO)"),
];

/// Explicit settings for remote stores, as key/value strings checked when set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreOptions {
    values: BTreeMap<String, String>,
}

fn parse_bool(key: &str, v: &str) -> Result<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(Error::InvalidArgument(format!("store option '{key}': '{v}' is not a boolean (true/false)"))),
    }
}

fn parse_uint(key: &str, v: &str, min: u64, max: u64) -> Result<u64> {
    match v.trim().parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(Error::InvalidArgument(format!("store option '{key}': '{v}' is not an integer in {min}..={max}"))),
    }
}

impl StoreOptions {
    /// No explicit settings: everything from the environment and the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `key` to `value`, checking both (an unknown key or a malformed value is
    /// [`Error::InvalidArgument`]). An empty `value` removes the key.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        if !KEYS.iter().any(|(k, _)| *k == key) {
            let known: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
            return Err(Error::InvalidArgument(format!("unknown store option '{key}' (known: {})", known.join(", "))));
        }
        if value.is_empty() {
            self.values.remove(key);
            return Ok(());
        }
        match key {
            "path_style" | "allow_http" | "anonymous" | "conditional_put" | "confine" => {
                parse_bool(key, value)?;
            }
            "timeout_ms" | "connect_timeout_ms" => {
                parse_uint(key, value, 1, 24 * 3600 * 1000)?;
            }
            "retries" => {
                parse_uint(key, value, 0, 100)?;
            }
            "max_concurrency" => {
                parse_uint(key, value, 1, 1024)?;
            }
            "latency_ms" => {
                if !value.trim().parse::<f64>().is_ok_and(|ms| ms.is_finite() && (0.0..=600_000.0).contains(&ms)) {
                    return Err(Error::InvalidArgument(format!(
                        "store option '{key}': '{value}' is not a number of milliseconds in 0..=600000"
                    )));
                }
            }
            "bandwidth_bytes_per_s" => {
                parse_uint(key, value, 1, 1 << 40)?;
            }
            "speculative_read_max" => {
                parse_uint(key, value, 0, 1 << 30)?;
            }
            "max_metadata_bytes" => {
                parse_uint(key, value, 1, 1 << 48)?;
            }
            "multipart_threshold" | "multipart_part_size" => {
                parse_uint(key, value, 5 << 20, 5 << 30)?;
            }
            "secret_access_key" | "session_token" => super::redact::register_secret(value),
            _ => {}
        }
        self.values.insert(key.to_string(), value.to_string());
        Ok(())
    }

    /// Sets every member of a JSON object (`{"endpoint": "...", "retries": 2}`); values may be strings,
    /// numbers or booleans.
    pub fn set_json(&mut self, json: &str) -> Result<()> {
        let v: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| Error::InvalidArgument(format!("store options are not valid JSON: {e}")))?;
        let obj = v.as_object().ok_or_else(|| Error::InvalidArgument("store options must be a JSON object".into()))?;
        let mut next = self.clone();
        for (k, v) in obj {
            let s = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(n) => n.to_string(),
                serde_json::Value::Bool(b) => b.to_string(),
                _ => return Err(Error::InvalidArgument(format!("store option '{k}' must be a string, number or boolean"))),
            };
            next.set(k, &s)?;
        }
        *self = next;
        Ok(())
    }

    /// The value set for `key`, if any.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// A boolean option, if set (values were checked by [`Self::set`]).
    pub fn get_bool(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(|v| parse_bool(key, v).ok())
    }

    /// An integer option, if set.
    pub fn get_u64(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(|v| v.trim().parse().ok())
    }

    /// The time limit of one request.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.get_u64("timeout_ms").unwrap_or(30_000))
    }

    /// The time limit to connect.
    pub fn connect_timeout(&self) -> Duration {
        Duration::from_millis(self.get_u64("connect_timeout_ms").unwrap_or(5_000))
    }

    /// Retries of a failed request.
    pub fn retries(&self) -> usize {
        self.get_u64("retries").unwrap_or(3) as usize
    }

    /// Requests in flight at once: the option, else `ZARR_REMOTE_CONCURRENCY`, else 64 (object stores
    /// serve thousands per prefix; the time of a read of many chunks is its round trips, each
    /// request's latency, times the requests divided by this).
    pub fn max_concurrency(&self) -> usize {
        self.get_u64("max_concurrency")
            .or_else(|| std::env::var("ZARR_REMOTE_CONCURRENCY").ok().and_then(|v| v.trim().parse().ok()))
            .filter(|n| (1..=1024).contains(n))
            .unwrap_or(64) as usize
    }

    /// Values larger than this are uploaded in parts.
    pub fn multipart_threshold(&self) -> usize {
        self.get_u64("multipart_threshold").unwrap_or(16 << 20) as usize
    }

    /// The size of each part of a multipart upload (the last may be smaller). S3 takes parts of
    /// 5 MiB to 5 GiB (the last one smaller) and at most 10000 of them: a value larger than 10000
    /// parts is uploaded in larger ones.
    pub fn multipart_part_size(&self) -> usize {
        self.get_u64("multipart_part_size").unwrap_or(8 << 20) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_checks_keys_and_values() {
        let mut o = StoreOptions::new();
        o.set("endpoint", "http://127.0.0.1:9").unwrap();
        o.set("retries", "2").unwrap();
        o.set("path_style", "TRUE").unwrap();
        assert_eq!(o.retries(), 2);
        assert_eq!(o.get_bool("path_style"), Some(true));
        assert!(matches!(o.set("bogus", "1"), Err(Error::InvalidArgument(_))));
        assert!(o.set("retries", "-1").is_err());
        assert!(o.set("timeout_ms", "0").is_err());
        assert!(o.set("allow_http", "maybe").is_err());
        assert!(o.set("max_concurrency", "5000").is_err());
        assert_eq!(o.multipart_part_size(), 8 << 20);
        assert!(o.set("multipart_part_size", "4096").is_err());
        o.set("multipart_part_size", &(5u64 << 20).to_string()).unwrap();
        assert_eq!(o.multipart_part_size(), 5 << 20);
        o.set("retries", "").unwrap();
        assert_eq!(o.retries(), 3);
        assert_eq!(o.timeout(), Duration::from_secs(30));
    }

    #[test]
    fn json() {
        let mut o = StoreOptions::new();
        o.set_json(r#"{"region": "eu-west-1", "timeout_ms": 1500, "allow_http": true}"#).unwrap();
        assert_eq!(o.get("region"), Some("eu-west-1"));
        assert_eq!(o.timeout(), Duration::from_millis(1500));
        assert_eq!(o.get_bool("allow_http"), Some(true));
        // A bad member leaves the options unchanged.
        assert!(o.set_json(r#"{"region": "x", "retries": "many"}"#).is_err());
        assert_eq!(o.get("region"), Some("eu-west-1"));
        assert!(o.set_json("[1]").is_err());
        assert!(o.set_json("{").is_err());
        assert!(o.set_json(r#"{"retries": [1]}"#).is_err());
    }
}
