//! The schemas of the four kinds of input file, generated from their raw structs: the
//! registry the loader checks files with and `fibon-verify schema` prints.

use std::sync::OnceLock;

use crate::schema::{FileKind, Schema};

/// The schema of a kind of file.
pub fn schema_of(kind: FileKind) -> &'static Schema {
    static SCHEMAS: OnceLock<[Schema; 4]> = OnceLock::new();
    let all = SCHEMAS.get_or_init(|| {
        [
            Schema::of::<crate::contract::raw::RawContract>(FileKind::Contract),
            Schema::of::<crate::scenario::raw::RawScenario>(FileKind::Scenario),
            Schema::of::<crate::config::raw::RawConfig>(FileKind::Config),
            Schema::of::<crate::policy::raw::RawPolicy>(FileKind::Policy),
        ]
    });
    &all[kind as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_a_valid_json_schema_of_its_kind() {
        for kind in FileKind::ALL {
            let schema = schema_of(kind);
            assert_eq!(schema.kind, kind);
            jsonschema::meta::validate(&schema.value)
                .unwrap_or_else(|e| panic!("{}: {e}", kind.name()));
            assert!(
                schema.value["$id"]
                    .as_str()
                    .is_some_and(|id| id.ends_with(&format!("/{}.schema.json", kind.name()))),
                "{}",
                kind.name()
            );
        }
    }
}
