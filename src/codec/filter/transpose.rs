//! `transpose` codec (array -> array): permutes the dimensions of the chunk.
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/transpose/index.html>
//! v3 name: `transpose`. Configuration: `{"order": [permutation of 0..n-1]}`.
//! Encoded shape `B[i] = A[order[i]]`, and `B[pos_b] = A[pos_a]` with `pos_b[i] = pos_a[order[i]]`.
//! Example: `{"name": "transpose", "configuration": {"order": [1, 0]}}`

use crate::codec::{ArrayRepr, ArrayToArrayCodec, Config};
use crate::error::{Error, Result};
use crate::selection::copy::permute;
use serde_json::{json, Map, Value};
use crate::codec::registry::CodecEntry;
use crate::codec::Codec;

/// The registry entry: v3 `transpose`.
pub static CODEC: CodecEntry = CodecEntry::v3("transpose", |_, cfg, decoded| Ok(Codec::ArrayToArray(Box::new(TransposeCodec::from_v3(cfg, decoded)?))));

/// The `transpose` codec.
#[derive(Debug, Clone)]
pub struct TransposeCodec {
    order: Vec<usize>,
    inverse: Vec<usize>,
}

impl TransposeCodec {
    /// A codec with the given permutation (validated).
    pub fn new(order: Vec<usize>) -> Result<TransposeCodec> {
        let n = order.len();
        let mut inverse = vec![usize::MAX; n];
        for (i, &o) in order.iter().enumerate() {
            if o >= n || inverse[o] != usize::MAX {
                return Err(Error::Metadata(format!("codec 'transpose': order {order:?} is not a permutation")));
            }
            inverse[o] = i;
        }
        Ok(TransposeCodec { order, inverse })
    }

    /// Parses the v3 configuration for chunks of `decoded`.
    pub fn from_v3(cfg: Option<&Map<String, Value>>, decoded: &ArrayRepr) -> Result<TransposeCodec> {
        let c = Config::new("transpose", cfg, &["order"])?;
        let order = c.get("order").ok_or_else(|| c.invalid("order", "required"))?;
        let list = order
            .as_array()
            .ok_or_else(|| c.invalid("order", &format!("expected a list of dimension indices, got {order}")))?;
        let order: Vec<usize> = list
            .iter()
            .map(|v| v.as_u64().map(|x| x as usize).ok_or_else(|| c.invalid("order", "entries must be non-negative integers")))
            .collect::<Result<_>>()?;
        if order.len() != decoded.shape.len() {
            return Err(Error::Metadata(format!(
                "codec 'transpose': order {order:?} has {} entries for a {}-dimensional chunk",
                order.len(),
                decoded.shape.len()
            )));
        }
        TransposeCodec::new(order)
    }
}

impl ArrayToArrayCodec for TransposeCodec {
    fn encoded_repr(&self, decoded: &ArrayRepr) -> Result<ArrayRepr> {
        if decoded.shape.len() != self.order.len() {
            return Err(Error::Metadata(format!(
                "codec 'transpose': order has {} entries for a {}-dimensional chunk",
                self.order.len(),
                decoded.shape.len()
            )));
        }
        Ok(ArrayRepr { shape: self.order.iter().map(|&o| decoded.shape[o]).collect(), ..decoded.clone() })
    }

    fn encode(&self, data: &[u8], decoded: &ArrayRepr) -> Result<Vec<u8>> {
        let mut out = crate::error::try_alloc(data.len())?;
        permute(data, &decoded.shape, &mut out, &self.order, &decoded.data_type)?;
        Ok(out)
    }

    fn decode_into(&self, encoded: &[u8], decoded: &ArrayRepr, out: &mut [u8]) -> Result<()> {
        if encoded.len() != out.len() {
            return Err(Error::Codec(format!("transpose: {} bytes, expected {}", encoded.len(), out.len())));
        }
        let enc_shape: Vec<u64> = self.order.iter().map(|&o| decoded.shape[o]).collect();
        permute(encoded, &enc_shape, out, &self.inverse, &decoded.data_type)
    }

    fn only_moves_elements(&self) -> bool {
        true
    }

    fn to_json(&self) -> Value {
        json!({"name": "transpose", "configuration": {"order": self.order}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DataType;

    #[test]
    fn transpose_3d_definition() {
        // Check B[pos_b] = A[pos_a] with pos_b[i] = pos_a[order[i]] for every position.
        let shape = [2u64, 3, 4];
        let order = vec![2, 0, 1];
        let r = ArrayRepr { shape: shape.to_vec(), data_type: DataType::UInt16, fill_value: vec![0, 0] };
        let c = TransposeCodec::new(order.clone()).unwrap();
        let a: Vec<u8> = (0..24u16).flat_map(|v| v.to_ne_bytes()).collect();
        let b = c.encode(&a, &r).unwrap();
        let bshape = c.encoded_repr(&r).unwrap().shape;
        assert_eq!(bshape, [4, 2, 3]);
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..4 {
                    let pa = [i, j, k];
                    let pb: Vec<usize> = order.iter().map(|&o| pa[o]).collect();
                    let la = (i * 3 + j) * 4 + k;
                    let lb = (pb[0] * 2 + pb[1]) * 3 + pb[2];
                    assert_eq!(a[la * 2..la * 2 + 2], b[lb * 2..lb * 2 + 2]);
                }
            }
        }
        let mut back = vec![0; 48];
        c.decode_into(&b, &r, &mut back).unwrap();
        assert_eq!(back, a);
    }

    #[test]
    fn odd_element_sizes() {
        let r = ArrayRepr { shape: vec![3, 2], data_type: DataType::Raw(3), fill_value: vec![0; 3] };
        let c = TransposeCodec::new(vec![1, 0]).unwrap();
        let a: Vec<u8> = (0..18).collect();
        let b = c.encode(&a, &r).unwrap();
        let mut back = vec![0; 18];
        c.decode_into(&b, &r, &mut back).unwrap();
        assert_eq!(back, a);
    }

    #[test]
    fn bad_orders() {
        assert!(TransposeCodec::new(vec![0, 0]).is_err());
        assert!(TransposeCodec::new(vec![0, 2]).is_err());
        let r = ArrayRepr { shape: vec![3, 2], data_type: DataType::UInt8, fill_value: vec![0] };
        let cfg = serde_json::json!({"order": [0, 1, 2]});
        assert!(TransposeCodec::from_v3(cfg.as_object(), &r).is_err());
        let cfg = serde_json::json!({"order": "F"});
        assert!(TransposeCodec::from_v3(cfg.as_object(), &r).is_err());
        assert!(TransposeCodec::from_v3(None, &r).is_err());
    }
}
