//! What one round trip to a remote store costs, learned from the requests the store handle has made:
//! the latency (the time to the answer of a request carrying few bytes) and the bandwidth (the bytes a
//! single answer delivers per second once it flows). Their product, the bytes that take as long to
//! arrive as a round trip, is what a reader may fetch beyond what it needs first without losing more
//! time than one more request would cost ([`LinkEstimate::speculative_bytes`]): a shard's first read
//! asks for its index together with the inner chunks likely needed, up to that many bytes.
//!
//! How it learns: every GET, ranged GET and HEAD of the handle reports its body size and its duration
//! (from sending the request to the last byte received). A request of at most [`SMALL`] bytes is a
//! latency sample; a larger one is a bandwidth sample, its bytes divided by its duration less the
//! latency estimate. Each estimate is the median of its last [`KEPT`] samples, so a request slowed
//! by a busy server or queued behind others moves it little. Before any sample: latency
//! [`DEFAULT_LATENCY_S`] (before the first request, which opening an array always makes: its metadata
//! documents are latency samples), bandwidth [`DEFAULT_BANDWIDTH`]. The store options `latency_ms` and
//! `bandwidth_bytes_per_s` fix either estimate instead (what is learned is then ignored), and
//! `speculative_read_max` bounds the product (default [`DEFAULT_SPECULATIVE_MAX`]; 0: never fetch
//! beyond what is needed).

use std::collections::VecDeque;
use std::sync::Mutex;

/// Requests of at most this many bytes measure latency (their transfer time is negligible).
pub(crate) const SMALL: u64 = 64 << 10;
/// Requests of at least this many bytes measure bandwidth (smaller ones are mostly latency).
pub(crate) const LARGE: u64 = 256 << 10;
/// Samples kept of each kind.
pub(crate) const KEPT: usize = 16;
/// The latency assumed before any request was timed.
pub(crate) const DEFAULT_LATENCY_S: f64 = 0.02;
/// The bandwidth assumed before any large request was timed (bytes per second).
pub(crate) const DEFAULT_BANDWIDTH: f64 = 100e6;
/// The default bound of [`LinkEstimate::speculative_bytes`].
pub(crate) const DEFAULT_SPECULATIVE_MAX: u64 = 8 << 20;
/// Bandwidth samples are clamped to this range (bytes per second): a duration at the clock's
/// resolution would otherwise give any value.
const BANDWIDTH_RANGE: (f64, f64) = (1e5, 1e11);

/// A store handle's estimates of its round trip (see the module documentation).
#[derive(Debug)]
pub struct LinkEstimate {
    fixed_latency: Option<f64>,
    fixed_bandwidth: Option<f64>,
    max_speculative: u64,
    samples: Mutex<Samples>,
}

#[derive(Debug, Default)]
struct Samples {
    latency: VecDeque<f64>,
    bandwidth: VecDeque<f64>,
}

fn push(q: &mut VecDeque<f64>, v: f64) {
    if q.len() == KEPT {
        q.pop_front();
    }
    q.push_back(v);
}

fn median(q: &VecDeque<f64>) -> Option<f64> {
    if q.is_empty() {
        return None;
    }
    let mut v: Vec<f64> = q.iter().copied().collect();
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

impl LinkEstimate {
    /// Estimates fixed where `latency_s` or `bandwidth` (bytes per second) are given, learned
    /// otherwise; speculative reads bounded by `max_speculative` bytes.
    pub fn new(latency_s: Option<f64>, bandwidth: Option<f64>, max_speculative: u64) -> LinkEstimate {
        LinkEstimate { fixed_latency: latency_s, fixed_bandwidth: bandwidth, max_speculative, samples: Default::default() }
    }

    /// From the store options `latency_ms`, `bandwidth_bytes_per_s` and `speculative_read_max`.
    pub fn from_options(o: &super::StoreOptions) -> LinkEstimate {
        let latency = o.get("latency_ms").and_then(|v| v.trim().parse::<f64>().ok()).map(|ms| ms / 1000.0);
        let bandwidth = o.get_u64("bandwidth_bytes_per_s").map(|b| b as f64);
        let max = o.get_u64("speculative_read_max").unwrap_or(DEFAULT_SPECULATIVE_MAX);
        LinkEstimate::new(latency, bandwidth, max)
    }

    /// Records a request that delivered `bytes` in `seconds` (request sent to last byte received).
    pub fn record(&self, bytes: u64, seconds: f64) {
        if !seconds.is_finite() || seconds < 0.0 {
            return;
        }
        let mut s = self.samples.lock().unwrap_or_else(|e| e.into_inner());
        if bytes <= SMALL {
            push(&mut s.latency, seconds);
        } else if bytes >= LARGE {
            let latency = self.fixed_latency.or_else(|| median(&s.latency)).unwrap_or(0.0);
            // The part of the duration spent receiving; at least a tenth of it (a latency sample
            // larger than this request's whole time says little about its transfer).
            let flowing = (seconds - latency).max(seconds / 10.0).max(1e-6);
            push(&mut s.bandwidth, (bytes as f64 / flowing).clamp(BANDWIDTH_RANGE.0, BANDWIDTH_RANGE.1));
        }
    }

    /// The latency estimate in seconds.
    pub fn latency(&self) -> f64 {
        self.fixed_latency
            .or_else(|| median(&self.samples.lock().unwrap_or_else(|e| e.into_inner()).latency))
            .unwrap_or(DEFAULT_LATENCY_S)
    }

    /// The bandwidth estimate in bytes per second.
    pub fn bandwidth(&self) -> f64 {
        self.fixed_bandwidth
            .or_else(|| median(&self.samples.lock().unwrap_or_else(|e| e.into_inner()).bandwidth))
            .unwrap_or(DEFAULT_BANDWIDTH)
    }

    /// The bytes a reader may fetch beyond what it needs with a request it makes anyway: latency
    /// times bandwidth (they take as long to arrive as one more round trip would), at most
    /// `speculative_read_max`.
    pub fn speculative_bytes(&self) -> u64 {
        let product = self.latency() * self.bandwidth();
        if !product.is_finite() || product <= 0.0 {
            return 0;
        }
        (product as u64).min(self.max_speculative)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_latency_and_bandwidth_from_requests() {
        let e = LinkEstimate::new(None, None, DEFAULT_SPECULATIVE_MAX);
        assert_eq!(e.latency(), DEFAULT_LATENCY_S);
        assert_eq!(e.bandwidth(), DEFAULT_BANDWIDTH);
        assert_eq!(e.speculative_bytes(), (DEFAULT_LATENCY_S * DEFAULT_BANDWIDTH) as u64);
        // Three small requests of ~100 ms (one slowed): the median is 100 ms.
        for t in [0.1, 0.1, 0.9] {
            e.record(500, t);
        }
        assert!((e.latency() - 0.1).abs() < 1e-9, "{}", e.latency());
        // 4 MB in 0.14 s: 0.04 s of transfer after the 0.1 s latency, 100 MB/s.
        e.record(4_000_000, 0.14);
        assert!((e.bandwidth() - 1e8).abs() < 1.0, "{}", e.bandwidth());
        // 10 MB per round trip, bounded by the default maximum.
        assert_eq!(e.speculative_bytes(), DEFAULT_SPECULATIVE_MAX);
        // Mid-sized requests are neither sample.
        e.record(100_000, 5.0);
        assert!((e.latency() - 0.1).abs() < 1e-9);
        // Only the last KEPT samples count: a fast local server replaces them.
        for _ in 0..KEPT {
            e.record(200, 0.0005);
            e.record(1 << 20, 0.0005 + (1 << 20) as f64 / 1e9);
        }
        assert!((e.latency() - 0.0005).abs() < 1e-9);
        assert!((e.bandwidth() / 1e9 - 1.0).abs() < 1e-6, "{}", e.bandwidth());
        assert!(e.speculative_bytes().abs_diff(500_000) <= 1, "{}", e.speculative_bytes());
        // Nonsense durations are ignored.
        e.record(10, f64::NAN);
        e.record(10, -1.0);
        assert!((e.latency() - 0.0005).abs() < 1e-9);
    }

    #[test]
    fn options_fix_the_estimates_and_bound_the_product() {
        let mut o = crate::store::StoreOptions::new();
        o.set("latency_ms", "100").unwrap();
        o.set("bandwidth_bytes_per_s", "20000000").unwrap();
        let e = LinkEstimate::from_options(&o);
        e.record(100, 0.001);
        e.record(10 << 20, 0.002);
        assert_eq!((e.latency(), e.bandwidth()), (0.1, 2e7), "fixed estimates ignore what is measured");
        assert_eq!(e.speculative_bytes(), 2_000_000);
        o.set("speculative_read_max", "65536").unwrap();
        assert_eq!(LinkEstimate::from_options(&o).speculative_bytes(), 65536);
        o.set("speculative_read_max", "0").unwrap();
        assert_eq!(LinkEstimate::from_options(&o).speculative_bytes(), 0, "off");
        o.set("latency_ms", "0.25").unwrap();
        assert_eq!(LinkEstimate::from_options(&o).latency(), 0.00025);
        assert!(o.set("latency_ms", "-1").is_err());
        assert!(o.set("latency_ms", "fast").is_err());
        assert!(o.set("bandwidth_bytes_per_s", "0").is_err());
        assert!(o.set("speculative_read_max", &(2u64 << 30).to_string()).is_err());
    }
}
