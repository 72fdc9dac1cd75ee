//! Placeholder until the merge branch lands (replaced wholesale by it).
use super::error::Result;
use super::value::{Hash, Value};

#[derive(Clone, Debug, Default, PartialEq)]
pub enum Behavior {
    #[default]
    Native,
    Deep,
    Deeper,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct MergeSpec {
    pub behavior: Behavior,
}

impl MergeSpec {
    pub fn from_config(_b: Option<&Value>, _o: Option<&Value>) -> Result<MergeSpec> {
        Ok(MergeSpec::default())
    }
    pub fn from_resolution_hash(_h: &Hash) -> Result<MergeSpec> {
        Ok(MergeSpec::default())
    }
}

pub fn merge_answer(mut lower: Hash, higher: Hash, _spec: &MergeSpec) -> Result<Hash> {
    for (k, v) in higher {
        lower.insert(k, v);
    }
    Ok(lower)
}

pub fn resolve_array(answer: Vec<Value>) -> Vec<Value> {
    answer
}
