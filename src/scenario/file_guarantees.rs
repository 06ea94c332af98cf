//! The keys of sections 17-22 as written: `[[sink]]`, `profile`, `[dedup]
//! mode` and a crash's `at`. Part of the file format (see `file.rs`);
//! validated in `guarantees.rs`.

use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned as S;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SinkTable {
    /// Unique; `[expect.sink."NAME"]` names it.
    #[schemars(with = "String")]
    pub name: S<String>,
    /// increment | upsert | irreversible.
    #[schemars(with = "SinkKindName")]
    pub kind: S<SinkKindName>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SinkKindName {
    Increment,
    Upsert,
    Irreversible,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileName {
    Model,
    SqsStandard,
    RabbitmqQuorum,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DedupModeName {
    Result,
    WriteIntent,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CrashAtName {
    BeforeEffect,
    AfterEffect,
    AfterDone,
}
