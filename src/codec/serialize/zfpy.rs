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
//! see [`crate::codec::serialize::zfp`].

use crate::codec::numcodecs::V2Config;
use crate::codec::serialize::zfp::{check_writable, compress, decompress, field_dims, Header, Source, ZType, ZfpMode};
use crate::codec::{ArrayRepr, ArrayToBytesCodec};
use crate::error::{Error, Result};
use serde_json::Value;
use std::borrow::Cow;
use crate::codec::registry::{CodecEntry, Numcodecs, UnderV3, V2Build};

/// The registry entry: numcodecs `zfpy` (array -> bytes; v2 compressor, v3 `numcodecs.zfpy`;
/// numcodecs refuses order "F" arrays).
pub static CODEC: CodecEntry = CodecEntry {
    numcodecs: Some(Numcodecs {
        id: "zfpy",
        build: V2Build::ArrayToBytes { build: |c, decoded, json| Ok(Box::new(ZfpyCodec::from_config(c, decoded, json)?)), fortran: false },
        under_v3: Some(UnderV3::ArrayToBytes),
        v3_defaults: None,
        elementwise: false,
        v1: None,
    }),
    ..CodecEntry::NONE
};

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

#[cfg(test)]
mod tests {
    use crate::codec::numcodecs::v3::from_v3;
    use crate::codec::{ArrayRepr, Codec};
    use crate::dtype::DataType;
    use crate::error::Error;
    use serde_json::{json, Value};
    use std::borrow::Cow;

    fn build(cfg: Value, dt: DataType, shape: &[u64]) -> (Box<dyn crate::codec::ArrayToBytesCodec>, ArrayRepr) {
        let repr = ArrayRepr { shape: shape.to_vec(), fill_value: vec![0; dt.size()], data_type: dt };
        let Codec::ArrayToBytes(c) = from_v3("numcodecs.zfpy", cfg.as_object(), &repr).unwrap() else { panic!() };
        (c, repr)
    }

    #[test]
    fn header_is_checked_against_the_array() {
        let data: Vec<u8> = (0..64i32).flat_map(|v| (v * v - 300).to_ne_bytes()).collect();
        let (c, repr) = build(json!({"mode": 4, "tolerance": -1}), DataType::Int32, &[8, 8]);
        let enc = c.encode(Cow::Borrowed(&data), &repr).unwrap().into_owned();
        let mut out = vec![0u8; data.len()];
        c.decode_into(&enc, &repr, &mut out).unwrap();
        assert_eq!(out, data, "reversible");
        // The same stream read as float32, or into a chunk of another size: refused before decoding.
        let (f, frepr) = build(json!({}), DataType::Float32, &[8, 8]);
        assert!(matches!(f.decode_into(&enc, &frepr, &mut out), Err(Error::Codec(_))));
        let (_, small) = build(json!({}), DataType::Int32, &[4, 8]);
        assert!(matches!(c.decode_into(&enc, &small, &mut out[..128]), Err(Error::Codec(_))));
        // A header declaring a huge field is refused without allocating for it.
        let mut big = enc.clone();
        big[5] = 0xff;
        big[6] = 0xff;
        big[7] = 0xff;
        assert!(c.decode_into(&big, &repr, &mut out).is_err());
        assert!(matches!(c.decode_into(b"zfp", &repr, &mut out), Err(Error::Codec(_))));
    }

    #[test]
    fn configurations() {
        for (cfg, ok) in [
            (json!({"mode": 2, "rate": 16}), true),
            (json!({"mode": 3, "precision": 10}), true),
            (json!({"mode": 4, "tolerance": 0.5}), true),
            (json!({"mode": 2, "rate": 1}), false),  // 4 bits per 1-D double block: zfpy would overflow
            (json!({"mode": 3, "precision": 99}), false),
            (json!({"mode": "x"}), false),
        ] {
            let repr = ArrayRepr { shape: vec![30], fill_value: vec![0; 8], data_type: DataType::Float64 };
            assert_eq!(from_v3("numcodecs.zfpy", cfg.as_object(), &repr).is_ok(), ok, "{cfg}");
        }
        let repr = ArrayRepr { shape: vec![30], fill_value: vec![0; 2], data_type: DataType::Int16 };
        assert!(matches!(from_v3("numcodecs.zfpy", None, &repr), Err(Error::Unsupported(_))));
    }
}
