//! `cast_value` codec (array -> array): converts each element's value to another numeric data type
//! (encode), and back (decode). Changes the data type along the chain.
//!
//! Spec: <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/cast_value>
//! (seed text: specs/extensions/scale_offset-and-cast_value.md).
//! v3 name: `cast_value`. Configuration (required):
//! `{"data_type": <v3 data type>, "rounding"?: "nearest-even" (default) | "towards-zero" |
//! "towards-positive" | "towards-negative" | "nearest-away", "out_of_range"?: "clamp" | "wrap",
//! "scalar_map"?: {"encode"?: [[in, out], ...], "decode"?: [[in, out], ...]}}`; other members invalid.
//! Source and target must be integer or floating-point types; `wrap` needs an integer target.
//! `scalar_map` entries use the fill-value encoding of their input / output types (`"+Infinity"` is
//! accepted as the spec's examples write it); the first entry for a key wins; a key matches by value
//! (any NaN matches a NaN key, 0 matches -0.0).
//! Per element, in order: the scalar map, then exact representation, then rounding followed by the
//! out-of-range rule; anything else (out of range without `out_of_range`, NaN or ±Infinity into an
//! integer type) is an [`crate::Error::Value`]. The conversion itself is [`crate::codec::filter::numeric_cast`].
//! The fill value is cast like the elements (encode) to give the encoded fill value; the spec asks
//! that it survive the round trip, so a fill value that cannot be encoded, or whose encoded value
//! cannot be decoded, fails at open with a metadata error.
//! Example: `{"name": "cast_value", "configuration": {"data_type": "uint8", "out_of_range": "clamp"}}`

use crate::codec::filter::numeric_cast::{element_bits, read_num, CastPlan, Kind, Num, OutOfRange, Rounding};
use crate::codec::{ArrayRepr, ArrayToArrayCodec, Config};
use crate::dtype::DataType;
use crate::error::{Error, Result};
use crate::dtype::fill_value;
use serde_json::{Map, Value};
use crate::codec::registry::CodecEntry;
use crate::codec::Codec;

/// The registry entry: v3 `cast_value`.
pub static CODEC: CodecEntry = CodecEntry::v3("cast_value", |_, cfg, decoded| Ok(Codec::ArrayToArray(Box::new(CastValueCodec::from_v3(cfg, decoded)?))));

/// The `cast_value` codec from one data type to another.
#[derive(Debug, Clone)]
pub struct CastValueCodec {
    encode: CastPlan,
    decode: CastPlan,
    /// The configuration as given, written back unchanged.
    configuration: Map<String, Value>,
}

fn meta(msg: String) -> Error {
    Error::Metadata(format!("codec 'cast_value': {msg}"))
}

/// Parses one scalar of `dt` in the fill-value encoding (plus `"+Infinity"`).
fn scalar(dt: &DataType, v: &Value, what: &str) -> Result<Vec<u8>> {
    let v = match v {
        Value::String(s) if s == "+Infinity" && dt.is_float() => Value::from("Infinity"),
        other => other.clone(),
    };
    fill_value::parse_v3(dt, &v).map_err(|e| meta(format!("scalar_map {what} {v} is not a {dt} value: {e}")))
}

/// Parses one direction of `scalar_map`: keys of `from`, values of `to`.
fn parse_map(list: &Value, from: &DataType, to: &DataType, dir: &str) -> Result<Vec<(Num, u64)>> {
    let list = list.as_array().ok_or_else(|| meta(format!("scalar_map.{dir} must be a list of [input, output] pairs")))?;
    let mut out: Vec<(Num, u64)> = Vec::with_capacity(list.len());
    for pair in list {
        let p = match pair.as_array() {
            Some(p) if p.len() == 2 => p,
            _ => return Err(meta(format!("scalar_map.{dir} entry {pair} is not an [input, output] pair"))),
        };
        let key = read_num(from, &scalar(from, &p[0], &format!("{dir} input"))?)?;
        let value = element_bits(&scalar(to, &p[1], &format!("{dir} output"))?);
        // Readers use the first occurrence of a repeated key.
        if !out.iter().any(|(k, _)| k.matches(key)) {
            out.push((key, value));
        }
    }
    Ok(out)
}

impl CastValueCodec {
    /// Parses the v3 configuration for chunks of `decoded`.
    pub fn from_v3(cfg: Option<&Map<String, Value>>, decoded: &ArrayRepr) -> Result<CastValueCodec> {
        let cfg = cfg.ok_or_else(|| meta("a configuration with 'data_type' is required".into()))?;
        let c = Config::new("cast_value", Some(cfg), &["data_type", "rounding", "out_of_range", "scalar_map"])?;
        let source = decoded.data_type.clone();
        if Kind::of(&source).is_none() {
            return Err(meta(format!("defined for integer and floating-point data types only, not {source}")));
        }
        let target = crate::dtype::DataType::from_v3_json(c.get("data_type").ok_or_else(|| c.invalid("data_type", "required"))?)?;
        let target_kind = match Kind::of(&target) {
            Some(k) => k,
            // Numeric formats of the registry whose casts are not implemented here.
            None if matches!(target, DataType::ExtFloat(_) | DataType::SmallInt(_)) => {
                return Err(Error::Unsupported(format!("codec 'cast_value': casts to {target} are not implemented")))
            }
            None => return Err(meta(format!("the target data type must be an integer or floating-point type, not {target}"))),
        };
        let rounding = Rounding::from_name(c.choice("rounding", &Rounding::NAMES, Some("nearest-even"))?).unwrap();
        let out_of_range = match c.get("out_of_range") {
            None => OutOfRange::Error,
            Some(_) => match c.choice("out_of_range", &["clamp", "wrap"], None)? {
                "clamp" => OutOfRange::Clamp,
                _ if !target_kind.is_int() => {
                    return Err(meta(format!("out_of_range 'wrap' needs an integer target, not {target}")))
                }
                _ => OutOfRange::Wrap,
            },
        };
        let (mut enc_map, mut dec_map) = (Vec::new(), Vec::new());
        if let Some(sm) = c.get("scalar_map") {
            let sm = sm.as_object().ok_or_else(|| meta(format!("scalar_map must be an object, got {sm}")))?;
            for (k, v) in sm {
                match k.as_str() {
                    "encode" => enc_map = parse_map(v, &source, &target, "encode")?,
                    "decode" => dec_map = parse_map(v, &target, &source, "decode")?,
                    other => return Err(meta(format!("scalar_map has an unknown member '{other}'"))),
                }
            }
        }
        let encode = CastPlan { source: source.clone(), target: target.clone(), rounding, out_of_range, map: enc_map };
        let decode = CastPlan { source: target, target: source, rounding, out_of_range, map: dec_map };
        Ok(CastValueCodec { encode, decode, configuration: cfg.clone() })
    }

    /// The data type of the encoded array.
    pub fn target(&self) -> &DataType {
        &self.encode.target
    }

    fn check(&self, n: usize, repr: &ArrayRepr, dt: &DataType, what: &str) -> Result<()> {
        let want = repr.num_elements() as usize * dt.size();
        if n != want {
            return Err(Error::Codec(format!("cast_value: {what} of {n} bytes, expected {want}")));
        }
        Ok(())
    }
}

impl ArrayToArrayCodec for CastValueCodec {
    fn encoded_repr(&self, decoded: &ArrayRepr) -> Result<ArrayRepr> {
        if decoded.data_type != self.encode.source {
            return Err(meta(format!("configured for {} receives {}", self.encode.source, decoded.data_type)));
        }
        let mut fill = vec![0; self.encode.target.size()];
        self.encode
            .cast(&decoded.fill_value, &mut fill)
            .map_err(|e| meta(format!("the fill value cannot be encoded: {e}")))?;
        let mut back = vec![0; decoded.data_type.size()];
        self.decode
            .cast(&fill, &mut back)
            .map_err(|e| meta(format!("the encoded fill value cannot be decoded: {e}")))?;
        Ok(ArrayRepr { shape: decoded.shape.clone(), data_type: self.encode.target.clone(), fill_value: fill })
    }

    fn encode(&self, data: &[u8], decoded: &ArrayRepr) -> Result<Vec<u8>> {
        self.check(data.len(), decoded, &self.encode.source, "input")?;
        let mut out = crate::error::try_alloc(decoded.num_elements() as usize * self.encode.target.size())?;
        self.encode.cast(data, &mut out)?;
        Ok(out)
    }

    fn decode_into(&self, encoded: &[u8], decoded: &ArrayRepr, out: &mut [u8]) -> Result<()> {
        self.check(encoded.len(), decoded, &self.decode.source, "input")?;
        self.check(out.len(), decoded, &self.decode.target, "output")?;
        self.decode.cast(encoded, out)
    }

    fn may_refuse_values(&self) -> bool {
        true
    }

    fn to_json(&self) -> Value {
        serde_json::json!({"name": "cast_value", "configuration": self.configuration})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn repr(dt: DataType, fill: Value) -> ArrayRepr {
        let fill_value = fill_value::parse_v3(&dt, &fill).unwrap();
        ArrayRepr { shape: vec![3], data_type: dt, fill_value }
    }

    fn codec(dt: DataType, cfg: Value) -> Result<CastValueCodec> {
        let r = ArrayRepr { shape: vec![3], fill_value: vec![0; dt.size()], data_type: dt };
        CastValueCodec::from_v3(cfg.as_object(), &r)
    }

    fn f64s(xs: &[f64]) -> Vec<u8> {
        xs.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    #[test]
    fn encode_decode_with_scalar_map() {
        let cfg = json!({"data_type": "uint8", "scalar_map": {"encode": [["NaN", 0], ["+Infinity", 255], ["NaN", 9]], "decode": [[0, "NaN"]]}});
        let r = repr(DataType::Float64, json!("NaN"));
        let c = CastValueCodec::from_v3(cfg.as_object(), &r).unwrap();
        let er = c.encoded_repr(&r).unwrap();
        assert_eq!(er.data_type, DataType::UInt8);
        assert_eq!(er.fill_value, [0]);
        let enc = c.encode(&f64s(&[f64::NAN, f64::INFINITY, 2.5]), &r).unwrap();
        assert_eq!(enc, [0, 255, 2]);
        let mut out = vec![0; 24];
        c.decode_into(&enc, &r, &mut out).unwrap();
        let back: Vec<f64> = out.chunks(8).map(|b| f64::from_ne_bytes(b.try_into().unwrap())).collect();
        assert!(back[0].is_nan());
        assert_eq!(&back[1..], [255.0, 2.0]);
        // -Infinity has no mapping: a value error
        assert!(matches!(c.encode(&f64s(&[1.0, f64::NEG_INFINITY, 0.0]), &r), Err(Error::Value(_))));
        // 256 is out of range without out_of_range
        assert!(matches!(c.encode(&f64s(&[256.0, 1.0, 0.0]), &r), Err(Error::Value(_))));
        assert_eq!(c.to_json()["configuration"], cfg);
    }

    #[test]
    fn configuration_errors() {
        let bad = |dt: DataType, cfg: Value| codec(dt, cfg.clone()).map(|_| ()).unwrap_err();
        assert!(matches!(bad(DataType::Float64, json!({"data_type": "float32", "out_of_range": "wrap"})), Error::Metadata(_)));
        assert!(matches!(bad(DataType::Float64, json!({"data_type": "int8", "rounding": "up"})), Error::Metadata(_)));
        assert!(matches!(bad(DataType::Float64, json!({"data_type": "int8", "out_of_range": "saturate"})), Error::Metadata(_)));
        assert!(matches!(bad(DataType::Float64, json!({"data_type": "bool"})), Error::Metadata(_)));
        assert!(matches!(bad(DataType::Float64, json!({"data_type": "complex64"})), Error::Metadata(_)));
        assert!(matches!(bad(DataType::Bool, json!({"data_type": "int8"})), Error::Metadata(_)));
        assert!(matches!(bad(DataType::Complex128, json!({"data_type": "float64"})), Error::Metadata(_)));
        assert!(matches!(bad(DataType::Float64, json!({"rounding": "towards-zero"})), Error::Metadata(_)));
        assert!(matches!(bad(DataType::Float64, json!({"data_type": "int8", "extra": 1})), Error::Metadata(_)));
        assert!(matches!(bad(DataType::Float64, json!({"data_type": "bfloat16"})), Error::Unsupported(_)));
        assert!(matches!(bad(DataType::Float64, json!({"data_type": "int8", "scalar_map": {"encode": [[1.5, 300]]}})), Error::Metadata(_)));
        assert!(matches!(bad(DataType::Float64, json!({"data_type": "int8", "scalar_map": {"encode": [["NaN"]]}})), Error::Metadata(_)));
        assert!(matches!(bad(DataType::Float64, json!({"data_type": "int8", "scalar_map": {"decode": [[1.5, 0]]}})), Error::Metadata(_)));
        assert!(matches!(bad(DataType::Float64, json!({"data_type": "int8", "scalar_map": {"both": []}})), Error::Metadata(_)));
        assert!(matches!(CastValueCodec::from_v3(None, &repr(DataType::Float64, json!(0))), Err(Error::Metadata(_))));
        assert!(codec(DataType::Float64, json!({"data_type": "int8", "out_of_range": "wrap"})).is_ok());
        assert!(codec(DataType::Int64, json!({"data_type": {"name": "float16"}})).is_ok());
    }

    #[test]
    fn fill_value_must_survive() {
        let c = codec(DataType::Float64, json!({"data_type": "int16"})).unwrap();
        assert!(matches!(c.encoded_repr(&repr(DataType::Float64, json!("NaN"))), Err(Error::Metadata(_))));
        assert!(matches!(c.encoded_repr(&repr(DataType::Float64, json!(1e6))), Err(Error::Metadata(_))));
        assert_eq!(c.encoded_repr(&repr(DataType::Float64, json!(-2.5))).unwrap().fill_value, (-2i16).to_ne_bytes());
        let c = codec(DataType::Float64, json!({"data_type": "int16", "out_of_range": "clamp"})).unwrap();
        assert_eq!(c.encoded_repr(&repr(DataType::Float64, json!(1e6))).unwrap().fill_value, i16::MAX.to_ne_bytes());
        // encodes, but decoding the encoded fill value needs a mapping back
        let c = codec(DataType::UInt8, json!({"data_type": "float32", "scalar_map": {"encode": [[7, "NaN"]]}})).unwrap();
        assert!(matches!(c.encoded_repr(&repr(DataType::UInt8, json!(7))), Err(Error::Metadata(_))));
        // -0.0 keeps its sign
        let c = codec(DataType::Float64, json!({"data_type": "float16"})).unwrap();
        assert_eq!(c.encoded_repr(&repr(DataType::Float64, json!(-0.0))).unwrap().fill_value, 0x8000u16.to_ne_bytes());
    }
}
