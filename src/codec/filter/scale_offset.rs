//! `scale_offset` codec (array -> array): `encode(x) = (x - offset) * scale`,
//! `decode(y) = y / scale + offset`, in the array's own data type.
//!
//! Spec: <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/scale_offset>
//! (seed text: specs/extensions/scale_offset-and-cast_value.md).
//! v3 name: `scale_offset`. Configuration (optional as a whole): `{"offset"?: <scalar>, "scale"?: <scalar>}`,
//! each in the Zarr v3 fill-value JSON encoding of the array's data type; defaults 0 and 1. Other
//! members are invalid. Only for integer and floating-point types (bool, complex, raw: metadata error).
//! Arithmetic follows the data type with no promotion: integer steps whose result the type cannot
//! hold (overflow of `x - offset`, of the product, of the quotient or of the sum, or a division with a
//! remainder) are an [`Error::Value`], never wrapped or truncated; float steps are IEEE 754 operations
//! of that width (float16 is computed in float64 and rounded once per step, which equals a native
//! float16 operation), so infinities and NaN follow IEEE rules. A zero `scale` cannot be decoded and is
//! refused at open (as zarr-python does). The fill value is encoded through the codec to give the
//! encoded representation's fill value; a fill value that cannot be encoded fails at open.
//! Example: `{"name": "scale_offset", "configuration": {"offset": 5, "scale": 0.1}}`

use crate::codec::filter::numeric_cast::{read_num, Kind, Num};
use crate::codec::{ArrayRepr, ArrayToArrayCodec, Config};
use crate::dtype::{f16_from_f64, DataType};
use crate::error::{Error, Result};
use crate::dtype::fill_value;
use half::f16;
use serde_json::{Map, Value};
use crate::codec::registry::CodecEntry;
use crate::codec::Codec;

/// The registry entry: v3 `scale_offset`.
pub static CODEC: CodecEntry = CodecEntry::v3("scale_offset", |_, cfg, decoded| Ok(Codec::ArrayToArray(Box::new(ScaleOffsetCodec::from_v3(cfg, decoded)?))));

/// The `scale_offset` codec for one data type.
#[derive(Debug, Clone)]
pub struct ScaleOffsetCodec {
    data_type: DataType,
    /// `offset`, one native-endian element.
    offset: Vec<u8>,
    /// `scale`, one native-endian element.
    scale: Vec<u8>,
    /// The configuration as given (`None`: omitted), written back unchanged.
    configuration: Option<Map<String, Value>>,
}

/// Element arithmetic of one data type: `None` when a step's result is not representable.
trait Arith: Copy {
    const SIZE: usize;
    fn load(b: &[u8]) -> Self;
    fn store(self, out: &mut [u8]);
    fn encode(x: Self, offset: Self, scale: Self) -> Option<Self>;
    fn decode(y: Self, offset: Self, scale: Self) -> Option<Self>;
    fn show(self) -> String;
}

// Per-type `Arith` impls (the arithmetic of each element type), not a dispatch: the element type of
// a data type is chosen by `with_data_type!` (see `dispatch!`).
macro_rules! int_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn load(b: &[u8]) -> Self {
                <$t>::from_ne_bytes(b.try_into().unwrap())
            }
            #[inline(always)]
            fn store(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_ne_bytes());
            }
            #[inline(always)]
            fn encode(x: Self, offset: Self, scale: Self) -> Option<Self> {
                x.checked_sub(offset)?.checked_mul(scale)
            }
            #[inline(always)]
            fn decode(y: Self, offset: Self, scale: Self) -> Option<Self> {
                // checked_rem/checked_div fail for MIN / -1, whose quotient does not fit
                if y.checked_rem(scale)? != 0 {
                    return None;
                }
                y.checked_div(scale)?.checked_add(offset)
            }
            fn show(self) -> String {
                self.to_string()
            }
        }
    )*};
}
int_arith!(i8, i16, i32, i64, u8, u16, u32, u64);

// Per-type `Arith` impls for the float types (see `int_arith!`).
macro_rules! float_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn load(b: &[u8]) -> Self {
                <$t>::from_ne_bytes(b.try_into().unwrap())
            }
            #[inline(always)]
            fn store(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_ne_bytes());
            }
            #[inline(always)]
            fn encode(x: Self, offset: Self, scale: Self) -> Option<Self> {
                Some((x - offset) * scale)
            }
            #[inline(always)]
            fn decode(y: Self, offset: Self, scale: Self) -> Option<Self> {
                Some(y / scale + offset)
            }
            fn show(self) -> String {
                format!("{self:?}")
            }
        }
    )*};
}
float_arith!(f32, f64);

impl Arith for f16 {
    const SIZE: usize = 2;
    #[inline(always)]
    fn load(b: &[u8]) -> Self {
        f16::from_bits(u16::from_ne_bytes([b[0], b[1]]))
    }
    #[inline(always)]
    fn store(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_bits().to_ne_bytes());
    }
    // float64 carries more than twice float16's precision plus two bits, so one float64 operation
    // rounded once to float16 is the correctly rounded float16 operation.
    #[inline(always)]
    fn encode(x: Self, offset: Self, scale: Self) -> Option<Self> {
        let d = f16_from_f64(x.to_f64() - offset.to_f64());
        Some(f16_from_f64(d.to_f64() * scale.to_f64()))
    }
    #[inline(always)]
    fn decode(y: Self, offset: Self, scale: Self) -> Option<Self> {
        let q = f16_from_f64(y.to_f64() / scale.to_f64());
        Some(f16_from_f64(q.to_f64() + offset.to_f64()))
    }
    fn show(self) -> String {
        format!("{:?}", self.to_f64())
    }
}

/// Calls `$f::<T>(args)` with `T` the element type of the numeric data type `$dt`: a call form of
/// `with_data_type!`, which alone maps data types to element types.
macro_rules! dispatch {
    ($dt:expr, $f:ident($($a:expr),*)) => {
        crate::dtype::dispatch::with_data_type!($dt, numeric, T => $f::<T>($($a),*), _ => Err(Error::Internal(format!("scale_offset on {}", $dt))))
    };
}

fn run<T: Arith>(c: &ScaleOffsetCodec, src: &[u8], dst: &mut [u8], encode: bool) -> Result<()> {
    let (o, s) = (T::load(&c.offset), T::load(&c.scale));
    for (x, out) in src.chunks_exact(T::SIZE).zip(dst.chunks_exact_mut(T::SIZE)) {
        let v = T::load(x);
        let r = if encode { T::encode(v, o, s) } else { T::decode(v, o, s) };
        match r {
            Some(r) => r.store(out),
            None => {
                let what = if encode {
                    format!("({} - {}) * {}", v.show(), o.show(), s.show())
                } else {
                    format!("{} / {} + {}", v.show(), s.show(), o.show())
                };
                return Err(Error::Value(format!(
                    "scale_offset: {what} is not representable in {} (overflow or a division with a remainder)",
                    c.data_type
                )));
            }
        }
    }
    Ok(())
}

impl ScaleOffsetCodec {
    /// Parses the v3 configuration (`None`: omitted) for chunks of `decoded`.
    pub fn from_v3(cfg: Option<&Map<String, Value>>, decoded: &ArrayRepr) -> Result<ScaleOffsetCodec> {
        let c = Config::new("scale_offset", cfg, &["offset", "scale"])?;
        let dt = &decoded.data_type;
        if Kind::of(dt).is_none() {
            return Err(Error::Metadata(format!(
                "codec 'scale_offset' is defined for integer and floating-point data types only, not {dt}"
            )));
        }
        let scalar = |key: &str, default: Value| -> Result<Vec<u8>> {
            let v = c.get(key).cloned().unwrap_or(default);
            fill_value::parse_v3(dt, &v).map_err(|e| c.invalid(key, &format!("not a {dt} scalar in the fill-value encoding ({e})")))
        };
        let offset = scalar("offset", Value::from(0))?;
        let scale = scalar("scale", Value::from(1))?;
        match read_num(dt, &scale)? {
            // (0.0 also matches -0.0)
            Num::Int(0) | Num::Float(0.0) => return Err(c.invalid("scale", "must be non-zero (decoding divides by it)")),
            _ => {}
        }
        Ok(ScaleOffsetCodec { data_type: dt.clone(), offset, scale, configuration: cfg.cloned() })
    }

    fn check(&self, repr: &ArrayRepr, n: usize, what: &str) -> Result<()> {
        if repr.data_type != self.data_type {
            return Err(Error::Internal(format!("scale_offset built for {} given {}", self.data_type, repr.data_type)));
        }
        if n != repr.nbytes() {
            return Err(Error::Codec(format!("scale_offset: {what} of {n} bytes, expected {}", repr.nbytes())));
        }
        Ok(())
    }
}

impl ArrayToArrayCodec for ScaleOffsetCodec {
    fn encoded_repr(&self, decoded: &ArrayRepr) -> Result<ArrayRepr> {
        if decoded.data_type != self.data_type {
            return Err(Error::Metadata(format!(
                "codec 'scale_offset' configured for {} receives {}",
                self.data_type, decoded.data_type
            )));
        }
        let mut fill = vec![0; decoded.fill_value.len()];
        dispatch!(&self.data_type, run(self, &decoded.fill_value, &mut fill, true)).map_err(|e| {
            Error::Metadata(format!("codec 'scale_offset' cannot encode the fill value: {e}"))
        })?;
        Ok(ArrayRepr { fill_value: fill, ..decoded.clone() })
    }

    fn encode(&self, data: &[u8], decoded: &ArrayRepr) -> Result<Vec<u8>> {
        self.check(decoded, data.len(), "input")?;
        let mut out = crate::error::try_alloc(data.len())?;
        dispatch!(&self.data_type, run(self, data, &mut out, true))?;
        Ok(out)
    }

    fn decode_into(&self, encoded: &[u8], decoded: &ArrayRepr, out: &mut [u8]) -> Result<()> {
        self.check(decoded, encoded.len(), "input")?;
        self.check(decoded, out.len(), "output")?;
        dispatch!(&self.data_type, run(self, encoded, out, false))
    }

    fn may_refuse_values(&self) -> bool {
        true
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), Value::from("scale_offset"));
        if let Some(cfg) = &self.configuration {
            m.insert("configuration".into(), Value::Object(cfg.clone()));
        }
        Value::Object(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn codec(dt: DataType, cfg: Value) -> Result<ScaleOffsetCodec> {
        let repr = ArrayRepr { shape: vec![1], fill_value: vec![0; dt.size()], data_type: dt };
        ScaleOffsetCodec::from_v3(cfg.as_object(), &repr)
    }

    fn enc<T: Arith>(c: &ScaleOffsetCodec, xs: &[T]) -> Result<Vec<T>> {
        let mut src = vec![0; xs.len() * T::SIZE];
        for (x, b) in xs.iter().zip(src.chunks_exact_mut(T::SIZE)) {
            x.store(b);
        }
        let mut dst = vec![0; src.len()];
        run::<T>(c, &src, &mut dst, true)?;
        Ok(dst.chunks_exact(T::SIZE).map(T::load).collect())
    }

    fn dec<T: Arith>(c: &ScaleOffsetCodec, xs: &[T]) -> Result<Vec<T>> {
        let mut src = vec![0; xs.len() * T::SIZE];
        for (x, b) in xs.iter().zip(src.chunks_exact_mut(T::SIZE)) {
            x.store(b);
        }
        let mut dst = vec![0; src.len()];
        run::<T>(c, &src, &mut dst, false)?;
        Ok(dst.chunks_exact(T::SIZE).map(T::load).collect())
    }

    #[test]
    fn integers_exact_or_value_error() {
        let c = codec(DataType::Int16, json!({"offset": 1000, "scale": 3})).unwrap();
        assert_eq!(enc(&c, &[1000i16, 1001, 990, 11922]).unwrap(), [0, 3, -30, 32766]);
        assert_eq!(dec(&c, &[0i16, 3, -30, 32766]).unwrap(), [1000, 1001, 990, 11922]);
        // (11923 - 1000) * 3 = 32769 overflows int16
        assert!(matches!(enc(&c, &[11923i16]), Err(Error::Value(_))));
        // x - offset overflows: -32768 - 1000
        assert!(matches!(enc(&c, &[i16::MIN]), Err(Error::Value(_))));
        // 4 / 3 has a remainder
        assert!(matches!(dec(&c, &[4i16]), Err(Error::Value(m)) if m.contains("4 / 3 + 1000")));
        // 32766 / 3 + 1000 fine; 32767 - 1 ... sum overflow: offset large
        let c = codec(DataType::Int8, json!({"offset": 100, "scale": -1})).unwrap();
        assert_eq!(enc(&c, &[100i8, 127, -27]).unwrap(), [0, -27, 127]);
        assert!(matches!(enc(&c, &[-29i8]), Err(Error::Value(_)))); // (-129) not representable
        assert_eq!(dec(&c, &[0i8, -27, 127]).unwrap(), [100, 127, -27]);
        assert!(matches!(dec(&c, &[-28i8]), Err(Error::Value(_)))); // 28 + 100 = 128
        // MIN / -1 does not fit
        let c = codec(DataType::Int8, json!({"scale": -1})).unwrap();
        assert!(matches!(dec(&c, &[-128i8]), Err(Error::Value(_))));
        assert!(matches!(enc(&c, &[-128i8]), Err(Error::Value(_))));
        // unsigned: x - offset below zero
        let c = codec(DataType::UInt8, json!({"offset": 10})).unwrap();
        assert_eq!(enc(&c, &[10u8, 255]).unwrap(), [0, 245]);
        assert!(matches!(enc(&c, &[9u8]), Err(Error::Value(_))));
        assert!(matches!(dec(&c, &[246u8]), Err(Error::Value(_))));
        let c = codec(DataType::UInt64, json!({"offset": 1, "scale": 2})).unwrap();
        assert_eq!(enc(&c, &[u64::MAX / 2 + 1]).unwrap(), [u64::MAX - 1]);
        assert!(matches!(enc(&c, &[u64::MAX]), Err(Error::Value(_))));
        let c = codec(DataType::Int64, json!({"offset": i64::MIN, "scale": 1})).unwrap();
        assert_eq!(enc(&c, &[-1i64]).unwrap(), [i64::MAX]);
        assert!(matches!(enc(&c, &[0i64]), Err(Error::Value(_))));
    }

    #[test]
    fn floats_in_their_own_width() {
        let c = codec(DataType::Float32, json!({"offset": 273.15, "scale": 0.1})).unwrap();
        let o = 273.15f32;
        let s = 0.1f32;
        let x = [300.0f32, -0.0, f32::NAN, f32::INFINITY, 1e38];
        let got = enc(&c, &x).unwrap();
        for (g, x) in got.iter().zip(x) {
            let want = (x - o) * s;
            assert!(g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()), "{x}");
        }
        let back = dec(&c, &got).unwrap();
        assert_eq!(back[0], got[0] / s + o);
        // float16: each step rounded to float16
        let c = codec(DataType::Float16, json!({"offset": 0.5, "scale": 3})).unwrap();
        let x = f16::from_f32(1000.25);
        let want = f16::from_f32(f16::from_f32(x.to_f32() - 0.5).to_f32() * 3.0);
        assert_eq!(enc(&c, &[x]).unwrap()[0].to_bits(), want.to_bits());
        assert!(enc(&c, &[f16::from_f32(30000.0)]).unwrap()[0].is_infinite());
        let c = codec(DataType::Float64, json!({"offset": "NaN"})).unwrap();
        assert!(enc(&c, &[1.0f64]).unwrap()[0].is_nan());
    }

    #[test]
    fn configuration_rules() {
        assert!(codec(DataType::Float64, Value::Null).is_ok());
        assert!(codec(DataType::Float64, json!({})).is_ok());
        for dt in [DataType::Bool, DataType::Complex64, DataType::Raw(2)] {
            assert!(matches!(codec(dt, json!({"offset": 0})), Err(Error::Metadata(_))));
        }
        for bad in [
            json!({"offset": 1.5}),
            json!({"scale": "NaN"}),
            json!({"scale": 0}),
            json!({"offset": 70000}),
            json!({"offset": "1"}),
            json!({"offset": 1, "astype": "int8"}),
        ] {
            assert!(matches!(codec(DataType::Int16, bad.clone()), Err(Error::Metadata(_))), "{bad}");
        }
        assert!(matches!(codec(DataType::Float32, json!({"scale": -0.0})), Err(Error::Metadata(_))));
        assert!(codec(DataType::Float32, json!({"scale": "0x3dcccccd", "offset": "-Infinity"})).is_ok());
        // configuration written back as given
        let c = codec(DataType::Int32, json!({"offset": -5})).unwrap();
        assert_eq!(c.to_json(), json!({"name": "scale_offset", "configuration": {"offset": -5}}));
        let c = codec(DataType::Int32, Value::Null).unwrap();
        assert_eq!(c.to_json(), json!({"name": "scale_offset"}));
    }

    #[test]
    fn fill_value_is_encoded() {
        let c = codec(DataType::Int16, json!({"offset": 1000, "scale": 3})).unwrap();
        let r = ArrayRepr { shape: vec![4], data_type: DataType::Int16, fill_value: 1001i16.to_ne_bytes().to_vec() };
        assert_eq!(c.encoded_repr(&r).unwrap().fill_value, 3i16.to_ne_bytes());
        let r = ArrayRepr { fill_value: i16::MAX.to_ne_bytes().to_vec(), ..r };
        assert!(matches!(c.encoded_repr(&r), Err(Error::Metadata(_))));
    }
}
