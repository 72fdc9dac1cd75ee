//! Placeholder until the render branch lands (replaced wholesale by it).
use crate::hiera::Value;
pub fn inspect(v: &Value) -> String {
    match v {
        Value::Int(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Nil => "nil".into(),
        Value::String(s) => format!("{s:?}"),
        Value::Array(a) => format!("[{}]", a.iter().map(inspect).collect::<Vec<_>>().join(", ")),
        _ => format!("{v:?}"),
    }
}
pub fn to_s(v: &Value) -> String {
    match v {
        Value::String(s) | Value::Symbol(s) => s.clone(),
        Value::Nil => String::new(),
        other => inspect(other),
    }
}
pub fn cli_output(v: &Value, _width: usize) -> String {
    match v {
        Value::String(s) if s.ends_with('\n') => s.clone(),
        Value::String(s) => format!("{s}\n"),
        other => format!("{}\n", inspect(other)),
    }
}
pub fn float_to_s(f: f64) -> String {
    format!("{f:?}")
}
