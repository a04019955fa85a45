//! numcodecs `zfpy` (array -> bytes): the chunk as one zfp stream with a full zfp header, as
//! `zfpy.compress_numpy(chunk, write_header=True)` writes it.
//!
//! numcodecs id `zfpy` (numcodecs `ZFPY`); v3 name `numcodecs.zfpy`. Configuration: `mode` (integer,
//! zfpy's constants: 2 fixed rate, 3 fixed precision, 4 fixed accuracy (default)), and the parameter
//! of that mode: `rate`, `precision` or `tolerance` (numcodecs' default -1). As in zfpy, a negative
//! parameter means the reversible (lossless) mode. Example:
//! `{"name": "numcodecs.zfpy", "configuration": {"mode": 4, "tolerance": 0.001}}`
//!
//! The chunk (C order, rank 1 to 4) of `int32`, `int64`, `float32` or `float64` is the zfp field of
//! the array's type, the last dimension fastest; in fixed-rate mode the rate is set for zfp type
//! `none`, as zfpy does. The stream is 64-bit word aligned. Decoding reads the header: its type must be
//! the array's and its field must hold the chunk's count of values (zarr-python reshapes the values to
//! the chunk's shape); the mode comes from the header, so chunks of any zfp mode are read. Writing
//! with another `mode` (e.g. 1, expert) is refused, as numcodecs cannot encode it either. Robustness:
//! see [`crate::codec::zfp`].

use super::V2Config;
use crate::codec::zfp::{check_writable, compress, decompress, field_dims, Header, Source, ZType, ZfpMode};
use crate::codec::{ArrayRepr, ArrayToBytesCodec};
use crate::error::{Error, Result};
use serde_json::Value;
use std::borrow::Cow;

/// The numcodecs `zfpy` codec.
#[derive(Debug, Clone)]
pub struct ZfpyCodec {
    /// The mode chunks are written with (`None`: a `mode` numcodecs cannot write).
    mode: Option<ZfpMode>,
    ztype: ZType,
    json: Value,
}

impl ZfpyCodec {
    /// Builds the codec from a numcodecs configuration for chunks of `decoded`; `json` is its metadata
    /// object.
    pub fn from_config(c: &V2Config, decoded: &ArrayRepr, json: Value) -> Result<ZfpyCodec> {
        let dt = &decoded.data_type;
        let ztype = ZType::exact(dt).ok_or_else(|| Error::Unsupported(format!("numcodecs 'zfpy': data type {dt}")))?;
        if decoded.shape.is_empty() || decoded.shape.len() > 4 {
            return Err(Error::Unsupported(format!("numcodecs 'zfpy': chunks of rank {} (zfpy takes 1 to 4)", decoded.shape.len())));
        }
        let mode = match c.int("mode", i64::MIN, i64::MAX, Some(4))? {
            2 => Some(match c.float("rate", Some(-1.0))? {
                r if r >= 0.0 => ZfpMode::FixedRate(r),
                _ => ZfpMode::Reversible,
            }),
            3 => Some(match c.int("precision", i64::from(i32::MIN), i64::from(i32::MAX), Some(-1))? {
                p if p >= 0 => ZfpMode::FixedPrecision(u32::try_from(p).unwrap_or(u32::MAX)),
                _ => ZfpMode::Reversible,
            }),
            4 => Some(match c.float("tolerance", Some(-1.0))? {
                t if t >= 0.0 => ZfpMode::FixedAccuracy(t),
                _ => ZfpMode::Reversible,
            }),
            _ => None,
        };
        if let Some(m) = &mode {
            m.validate("numcodecs.zfpy")?;
            check_writable(m, ztype, &field_dims(&decoded.shape)?, None)?;
        }
        Ok(ZfpyCodec { mode, ztype, json })
    }
}

impl ArrayToBytesCodec for ZfpyCodec {
    fn encode<'a>(&self, data: Cow<'a, [u8]>, repr: &ArrayRepr) -> Result<Cow<'a, [u8]>> {
        let mode = self.mode.as_ref().ok_or_else(|| Error::Unsupported("numcodecs 'zfpy': cannot write this mode".into()))?;
        let dims = field_dims(&repr.shape)?;
        Ok(Cow::Owned(compress(&data, self.ztype, &dims, mode, None, true)?))
    }

    fn decode_into(&self, encoded: &[u8], _repr: &ArrayRepr, out: &mut [u8]) -> Result<()> {
        let want = self.ztype;
        let check = move |h: &Header| {
            if h.ztype != want {
                return Err(Error::Codec(format!("zfpy: stream holds zfp {:?} values, the array {want:?}", h.ztype)));
            }
            Ok(())
        };
        decompress(encoded, Source::Header { check: &check }, out)
    }

    fn encoded_size(&self, _repr: &ArrayRepr) -> Option<u64> {
        None
    }

    fn to_json(&self) -> Value {
        self.json.clone()
    }
}
