//! Schema forms the representations share, in shapes every client generator reads.

use schemars::{Schema, SchemaGenerator, json_schema};

/// A flag that is `true` or absent (`test`, `deleted`): `enum: [true]` rather than `const`,
/// which some generators turn into invalid code.
pub fn only_true(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "boolean", "enum": [true] })
}

/// A constant string (`api_version`), as a one-value enum.
pub fn only_v1(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": ["v1"] })
}
