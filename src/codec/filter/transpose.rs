//! `transpose` codec (array -> array): permutes the dimensions of the chunk.
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/transpose/index.html>
//! v3 name: `transpose`. Configuration: `{"order": [permutation of 0..n-1]}`.
//! Encoded shape `B[i] = A[order[i]]`, and `B[pos_b] = A[pos_a]` with `pos_b[i] = pos_a[order[i]]`.
//! Example: `{"name": "transpose", "configuration": {"order": [1, 0]}}`

use crate::codec::{ArrayRepr, ArrayToArrayCodec, Config};
use crate::error::{Error, Result};
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

/// Writes into `dst` the array whose dimension `k` is dimension `map[k]` of the C-order `src` array.
pub fn permute(src: &[u8], src_shape: &[u64], dst: &mut [u8], map: &[usize], elem: usize) {
    let rank = src_shape.len();
    debug_assert_eq!(src.len(), dst.len());
    if rank == 0 || src.is_empty() {
        dst.copy_from_slice(src);
        return;
    }
    let mut src_strides = vec![0usize; rank];
    let mut acc = elem;
    for d in (0..rank).rev() {
        src_strides[d] = acc;
        acc *= src_shape[d] as usize;
    }
    let dst_shape: Vec<usize> = map.iter().map(|&m| src_shape[m] as usize).collect();
    let steps: Vec<usize> = map.iter().map(|&m| src_strides[m]).collect();
    match elem {
        1 => permute_n::<1>(src, dst, &dst_shape, &steps, 1),
        2 => permute_n::<2>(src, dst, &dst_shape, &steps, 2),
        4 => permute_n::<4>(src, dst, &dst_shape, &steps, 4),
        8 => permute_n::<8>(src, dst, &dst_shape, &steps, 8),
        16 => permute_n::<16>(src, dst, &dst_shape, &steps, 16),
        _ => permute_n::<0>(src, dst, &dst_shape, &steps, elem),
    }
}

/// The permutation loop; `N` is the element size when known at compile time (0: use `elem`).
fn permute_n<const N: usize>(src: &[u8], dst: &mut [u8], dst_shape: &[usize], steps: &[usize], elem: usize) {
    let e = if N == 0 { elem } else { N };
    let rank = dst_shape.len();
    let inner = dst_shape[rank - 1];
    let inner_step = steps[rank - 1];
    let mut idx = vec![0usize; rank - 1];
    let mut base = 0usize;
    for row in dst.chunks_exact_mut(inner * e) {
        let mut s = base;
        for out in row.chunks_exact_mut(e) {
            out.copy_from_slice(&src[s..s + e]);
            s += inner_step;
        }
        // advance the outer odometer
        let mut d = rank - 1;
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            base += steps[d];
            if idx[d] < dst_shape[d] {
                break;
            }
            base -= steps[d] * dst_shape[d];
            idx[d] = 0;
        }
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
        permute(data, &decoded.shape, &mut out, &self.order, decoded.data_type.size());
        Ok(out)
    }

    fn decode_into(&self, encoded: &[u8], decoded: &ArrayRepr, out: &mut [u8]) -> Result<()> {
        if encoded.len() != out.len() {
            return Err(Error::Codec(format!("transpose: {} bytes, expected {}", encoded.len(), out.len())));
        }
        let enc_shape: Vec<u64> = self.order.iter().map(|&o| decoded.shape[o]).collect();
        permute(encoded, &enc_shape, out, &self.inverse, decoded.data_type.size());
        Ok(())
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
    fn transpose_2d() {
        // 2x3 u8 -> order [1,0] -> 3x2
        let src = [0u8, 1, 2, 3, 4, 5];
        let mut dst = [0u8; 6];
        permute(&src, &[2, 3], &mut dst, &[1, 0], 1);
        assert_eq!(dst, [0, 3, 1, 4, 2, 5]);
    }

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
