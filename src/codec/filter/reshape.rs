//! `reshape` codec (array -> array): the same elements in the same (C) order, under another shape.
//!
//! Spec: zarr-extensions `codecs/reshape`. v3 name: `reshape`. Configuration: `{"shape": [...]}`, one
//! entry per output dimension: a positive integer (that size), a list of input dimensions (the
//! product of their sizes), or `-1` (at most once: whatever makes the element counts equal).
//! Example: `{"name": "reshape", "configuration": {"shape": [[0, 1], [2], 3]}}`
//!
//! Checks (errors are `Error::Metadata`): the element counts must be equal; the input dimensions
//! listed, over all entries, strictly increase; an entry listing dimensions `d0..dk` must have the
//! output dimensions before it hold as many elements as the input dimensions before `d0`, and those
//! after it as many as the input dimensions after `dk`. Encoding and decoding copy the bytes.

use crate::codec::{ArrayRepr, ArrayToArrayCodec, Config};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};
use crate::codec::registry::CodecEntry;
use crate::codec::Codec;

/// The registry entry: v3 `reshape`.
pub static CODEC: CodecEntry = CodecEntry::v3("reshape", |_, cfg, decoded| Ok(Codec::ArrayToArray(Box::new(ReshapeCodec::from_v3(cfg, decoded)?))));

/// One entry of `shape`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Dim {
    Size(u64),
    Inputs(Vec<usize>),
    Auto,
}

/// The `reshape` codec.
#[derive(Debug, Clone)]
pub struct ReshapeCodec {
    shape: Vec<Dim>,
    json: Value,
}

fn bad(why: String) -> Error {
    Error::Metadata(format!("codec 'reshape': {why}"))
}

fn product(s: &[u64]) -> Option<u64> {
    s.iter().try_fold(1u64, |a, &b| a.checked_mul(b))
}

impl ReshapeCodec {
    /// Parses the v3 configuration for chunks of `decoded`.
    pub fn from_v3(cfg: Option<&Map<String, Value>>, decoded: &ArrayRepr) -> Result<ReshapeCodec> {
        let c = Config::new("reshape", cfg, &["shape"])?;
        let v = c.get("shape").ok_or_else(|| c.invalid("shape", "required"))?;
        let list = v.as_array().ok_or_else(|| c.invalid("shape", &format!("expected a list, got {v}")))?;
        let mut shape = Vec::with_capacity(list.len());
        for e in list {
            shape.push(match e {
                Value::Array(dims) => Dim::Inputs(
                    dims.iter()
                        .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| c.invalid("shape", &format!("{e} is not a list of dimension indices")))?,
                ),
                _ => match e.as_i64() {
                    Some(-1) => Dim::Auto,
                    Some(n) if n > 0 => Dim::Size(n as u64),
                    _ => return Err(c.invalid("shape", &format!("{e} is not a positive size, -1 or a list of dimensions"))),
                },
            });
        }
        let codec = ReshapeCodec { shape, json: json!({"name": "reshape", "configuration": {"shape": v}}) };
        codec.output_shape(&decoded.shape)?;
        Ok(codec)
    }

    /// The output shape for input shape `a`, after checking every constraint.
    fn output_shape(&self, a: &[u64]) -> Result<Vec<u64>> {
        let total = product(a).ok_or_else(|| bad("chunk too large".into()))?;
        if self.shape.iter().filter(|d| **d == Dim::Auto).count() > 1 {
            return Err(bad("-1 appears more than once in shape".into()));
        }
        let mut last: Option<usize> = None;
        let mut b = Vec::with_capacity(self.shape.len());
        for d in &self.shape {
            b.push(match d {
                Dim::Size(n) => *n,
                Dim::Auto => 0,
                Dim::Inputs(dims) => {
                    for &i in dims {
                        if i >= a.len() {
                            return Err(bad(format!("input dimension {i} does not exist (rank {})", a.len())));
                        }
                        if last.is_some_and(|l| i <= l) {
                            return Err(bad("the input dimensions listed must strictly increase".into()));
                        }
                        last = Some(i);
                    }
                    dims.iter().map(|&i| a[i]).product()
                }
            });
        }
        if let Some(pos) = self.shape.iter().position(|d| *d == Dim::Auto) {
            let rest: u64 = product(&[&b[..pos], &b[pos + 1..]].concat()).ok_or_else(|| bad("shape too large".into()))?;
            if rest == 0 || total % rest != 0 {
                return Err(bad(format!("no size for -1 makes {:?} hold the {total} elements of {a:?}", self.shape_json())));
            }
            b[pos] = total / rest;
        }
        if product(&b) != Some(total) {
            return Err(bad(format!("shape {} holds {:?} elements, the chunk {a:?} has {total}", self.shape_json(), product(&b))));
        }
        for (i, d) in self.shape.iter().enumerate() {
            if let Dim::Inputs(dims) = d {
                if let (Some(&first), Some(&lastd)) = (dims.first(), dims.last()) {
                    if product(&b[..i]) != product(&a[..first]) || product(&b[i + 1..]) != product(&a[lastd + 1..]) {
                        return Err(bad(format!(
                            "output dimension {i} does not line up with input dimensions {dims:?} of {a:?}"
                        )));
                    }
                }
            }
        }
        Ok(b)
    }

    fn shape_json(&self) -> &Value {
        &self.json["configuration"]["shape"]
    }
}

impl ArrayToArrayCodec for ReshapeCodec {
    fn encoded_repr(&self, decoded: &ArrayRepr) -> Result<ArrayRepr> {
        Ok(ArrayRepr { shape: self.output_shape(&decoded.shape)?, ..decoded.clone() })
    }

    fn encode(&self, data: &[u8], _decoded: &ArrayRepr) -> Result<Vec<u8>> {
        Ok(data.to_vec())
    }

    fn decode_into(&self, encoded: &[u8], _decoded: &ArrayRepr, out: &mut [u8]) -> Result<()> {
        super::copy_unchanged(encoded, out, "reshape")
    }

    fn only_moves_elements(&self) -> bool {
        true
    }

    fn to_json(&self) -> Value {
        self.json.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DataType;

    fn out(shape: Value, a: &[u64]) -> Result<Vec<u64>> {
        let r = ArrayRepr { shape: a.to_vec(), data_type: DataType::UInt8, fill_value: vec![0] };
        let cfg = json!({"shape": shape});
        let c = ReshapeCodec::from_v3(cfg.as_object(), &r)?;
        Ok(c.encoded_repr(&r)?.shape)
    }

    #[test]
    fn shapes() {
        assert_eq!(out(json!([[0, 1], [2], 3]), &[100, 50, 64, 3]).unwrap(), [5000, 64, 3]);
        assert_eq!(out(json!([-1]), &[4, 5, 6]).unwrap(), [120]);
        assert_eq!(out(json!([2, -1, 3]), &[4, 3]).unwrap(), [2, 2, 3]);
        assert_eq!(out(json!([[0], [], [1]]), &[4, 3]).unwrap(), [4, 1, 3]);
        assert_eq!(out(json!([12]), &[4, 3]).unwrap(), [12]);
        for (s, a) in [
            (json!([[1], [0]]), vec![4, 3]),
            (json!([[1, 0], 12]), vec![4, 3]),
            (json!([5]), vec![4, 3]),
            (json!([-1, -1]), vec![4, 3]),
            (json!([5, -1]), vec![4, 3]),
            (json!([0, 12]), vec![4, 3]),
            (json!([[2]]), vec![4, 3]),
            (json!([2, [1]]), vec![4, 3]),
            (json!("12"), vec![4, 3]),
        ] {
            assert!(matches!(out(s.clone(), &a), Err(Error::Metadata(_))), "{s}");
        }
    }
}
