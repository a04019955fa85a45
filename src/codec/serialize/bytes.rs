//! `bytes` codec (array -> bytes): elements in C order with a fixed byte order.
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/bytes/index.html>
//! v3 name: `bytes`. Configuration: `{"endian": "little" | "big"}`; `endian` may be omitted only for
//! types whose byte order does not matter (1-byte types, `r<N>`, `null_terminated_bytes`, the
//! 8-bit and narrower extension types), and for structured types, which are then little-endian (the
//! registry's rule for zarr-python's legacy `structured` arrays). Swapping works per unit: the whole
//! number for integers, floats and time types, each component for complex types, each UTF-32 code
//! unit for `fixed_length_utf32`, each field for structured types; single bytes never swap.
//! Example: `{"name": "bytes", "configuration": {"endian": "little"}}`
//!
//! Zarr v2 arrays use the same codec with the byte order of their dtype (per field for structured
//! dtypes). Partial decoding reads only the byte span between the first and last element of a region.

use crate::codec::{ArrayRepr, ArrayToBytesCodec, Config};
use crate::dtype::{DataType, Endian, SwapPlan};
use crate::error::{Error, Result};
use crate::selection::{Dest, Selection};
use crate::store::ByteSource;
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use crate::codec::registry::CodecEntry;
use crate::codec::Codec;

/// The registry entry: v3 `bytes`.
pub static CODEC: CodecEntry = CodecEntry::v3("bytes", |_, cfg, decoded| Ok(Codec::ArrayToBytes(Box::new(BytesCodec::from_v3(cfg, decoded)?))));

/// The `bytes` codec.
#[derive(Debug, Clone)]
pub struct BytesCodec {
    endian: Option<Endian>,
    plan: SwapPlan,
}

impl BytesCodec {
    /// A codec storing elements of `dtype` in byte order `endian` (`None`: only for types without byte
    /// order, or structured types whose fields carry their own).
    pub fn new(dtype: &DataType, endian: Option<Endian>) -> BytesCodec {
        BytesCodec { endian, plan: SwapPlan::for_type(dtype, endian) }
    }

    /// Parses the v3 configuration for arrays of `decoded`.
    pub fn from_v3(cfg: Option<&Map<String, Value>>, decoded: &ArrayRepr) -> Result<BytesCodec> {
        let c = Config::new("bytes", cfg, &["endian"])?;
        let endian = match c.get("endian") {
            None => None,
            Some(_) => Some(match c.choice("endian", &["little", "big"], None)? {
                "little" => Endian::Little,
                _ => Endian::Big,
            }),
        };
        if endian.is_none() && decoded.data_type.has_endianness() {
            if let DataType::Struct(_) = decoded.data_type {
                // zarr-python's legacy `structured` arrays omit it: little-endian, says the registry
                return Ok(BytesCodec { endian: None, plan: SwapPlan::for_type(&decoded.data_type, Some(Endian::Little)) });
            }
            return Err(Error::Metadata(format!(
                "codec 'bytes': 'endian' is required for data type {}",
                decoded.data_type
            )));
        }
        Ok(BytesCodec::new(&decoded.data_type, endian))
    }

    fn check_len(n: u64, repr: &ArrayRepr) -> Result<()> {
        let want = repr.nbytes() as u64;
        if n != want {
            return Err(Error::Codec(format!("bytes: stored chunk has {n} bytes, expected {want}")));
        }
        Ok(())
    }
}

impl ArrayToBytesCodec for BytesCodec {
    fn encode<'a>(&self, data: Cow<'a, [u8]>, _repr: &ArrayRepr) -> Result<Cow<'a, [u8]>> {
        if self.plan.is_identity() {
            return Ok(data);
        }
        let mut data = data.into_owned();
        self.plan.apply_in_place(&mut data);
        Ok(Cow::Owned(data))
    }

    fn decode_into(&self, encoded: &[u8], repr: &ArrayRepr, out: &mut [u8]) -> Result<()> {
        Self::check_len(encoded.len() as u64, repr)?;
        self.plan.apply_copy(encoded, out);
        Ok(())
    }

    fn is_identity(&self, _repr: &ArrayRepr) -> bool {
        self.plan.is_identity()
    }

    fn element_bytes(&self, _repr: &ArrayRepr) -> Option<SwapPlan> {
        Some(self.plan.clone())
    }

    fn encoded_size(&self, repr: &ArrayRepr) -> Option<u64> {
        Some(repr.nbytes() as u64)
    }

    fn partial_decode(&self, src: &dyn ByteSource, repr: &ArrayRepr, sel: &Selection, dest: Dest) -> Result<()> {
        Self::check_len(src.len(), repr)?;
        if sel.is_empty() {
            return Ok(());
        }
        let (first_byte, end_byte) = sel.byte_span(&repr.layout());
        crate::scratch::with_decoded(end_byte - first_byte, |window| {
            src.read_into(first_byte as u64, window)?;
            dest.copy_from(window, first_byte, &repr.shape, sel, &self.plan)
        })
    }

    fn to_json(&self) -> Value {
        match self.endian {
            None => json!({"name": "bytes"}),
            Some(Endian::Little) => json!({"name": "bytes", "configuration": {"endian": "little"}}),
            Some(Endian::Big) => json!({"name": "bytes", "configuration": {"endian": "big"}}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::RawBuf;
    use crate::selection::convert::Conv;
    use crate::selection::Layout;
    use crate::store::SliceSource;

    fn repr(shape: &[u64], dt: DataType) -> ArrayRepr {
        ArrayRepr { shape: shape.to_vec(), fill_value: vec![0; dt.size()], data_type: dt }
    }

    #[test]
    fn config() {
        let r16 = repr(&[2], DataType::Int16);
        assert!(BytesCodec::from_v3(None, &r16).is_err());
        assert!(BytesCodec::from_v3(None, &repr(&[2], DataType::UInt8)).is_ok());
        assert!(BytesCodec::from_v3(None, &repr(&[2], DataType::Raw(6))).is_ok());
        let bad = serde_json::json!({"endian": "middle"});
        assert!(BytesCodec::from_v3(bad.as_object(), &r16).is_err());
        let extra = serde_json::json!({"endian": "big", "x": 1});
        assert!(BytesCodec::from_v3(extra.as_object(), &r16).is_err());
    }

    #[test]
    fn big_endian_complex() {
        let r = repr(&[2], DataType::Complex64);
        let c = BytesCodec::new(&DataType::Complex64, Some(Endian::Big));
        let data: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0].iter().flat_map(|x| x.to_ne_bytes()).collect();
        let enc = c.encode(Cow::Borrowed(&data[..]), &r).unwrap().into_owned();
        let want: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0].iter().flat_map(|x| x.to_be_bytes()).collect();
        assert_eq!(enc, want);
        let mut out = vec![0; 16];
        c.decode_into(&enc, &r, &mut out).unwrap();
        assert_eq!(out, data);
        assert!(c.decode_into(&enc[..15], &r, &mut out).is_err());
    }

    #[test]
    fn partial_reads_only_the_span() {
        let r = repr(&[4, 4], DataType::UInt16);
        let c = BytesCodec::new(&DataType::UInt16, Some(Endian::Big));
        let vals: Vec<u16> = (0..16).collect();
        let stored: Vec<u8> = vals.iter().flat_map(|v| v.to_be_bytes()).collect();
        let mut out = vec![0u8; 4 * 2];
        let (layout, conv) = (Layout::c_order(&[2, 2], 2), Conv::identity(&DataType::UInt16));
        let dest = Dest { buf: RawBuf::new(&mut out), offset: 0, layout: &layout, conv: &conv, fill: None };
        c.partial_decode(&SliceSource(&stored), &r, &Selection::dense(&[1, 1], &[2, 2]), dest).unwrap();
        let got: Vec<u16> = out.chunks(2).map(|b| u16::from_ne_bytes([b[0], b[1]])).collect();
        assert_eq!(got, [5, 6, 9, 10]);
        // Every other element of rows 1 and 3, into float32.
        let mut out = vec![0u8; 4 * 4];
        let (layout, conv) = (Layout::c_order(&[2, 2], 4), Conv::new(&DataType::UInt16, &DataType::Float32).unwrap());
        let dest = Dest { buf: RawBuf::new(&mut out), offset: 0, layout: &layout, conv: &conv, fill: None };
        c.partial_decode(&SliceSource(&stored), &r, &Selection::new(&[1, 0], &[2, 2], Some(&[2, 2])).unwrap(), dest).unwrap();
        let got: Vec<f32> = out.chunks(4).map(|b| f32::from_ne_bytes(b.try_into().unwrap())).collect();
        assert_eq!(got, [4.0, 6.0, 12.0, 14.0]);
        let dest = Dest { buf: RawBuf::new(&mut out), offset: 0, layout: &layout, conv: &conv, fill: None };
        assert!(c.partial_decode(&SliceSource(&stored[..30]), &r, &Selection::dense(&[0, 0], &[1, 1]), dest).is_err());
    }
}
