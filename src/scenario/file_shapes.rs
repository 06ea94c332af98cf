//! Shapes of a table that its fields' types cannot say, for the JSON
//! Schema (`schema.rs`): each a `#[schemars(transform = ...)]` on its type
//! in `file.rs`, so that the type and its schema are read together.

use serde_json::json;

/// `[delivery]`'s schema: what each profile requires and refuses (decision
/// 22.5). Attached to the type (`file::Delivery`).
pub(super) fn delivery_profiles(schema: &mut schemars::Schema) {
    // The model wants max_receives and one retry delay; rabbitmq-quorum
    // has defaults for both; sqs-standard retries at the visibility
    // timeout.
    let profile = |name: &str| json!({ "required": ["profile"], "properties": { "profile": { "const": name } } });
    let retry_keys =
        json!({ "anyOf": [{ "required": ["retry_interval"] }, { "required": ["backoff"] }] });
    // `max_receives = 0` is the delivery limit 0 under rabbitmq-quorum,
    // and refused under the others.
    let no_zero = json!({ "properties": { "max_receives": { "not": { "const": 0 } } } });
    // Consumer settings of one profile: `ack_backoff` (JetStream),
    // `visibility_heartbeat` (SQS), `broker_version` (RabbitMQ);
    // `on_failure` takes JetStream's values or SQS's.
    let without = |key: &str| json!({ "not": { "required": [key] } });
    let on_failure =
        |values: &[&str]| json!({ "properties": { "on_failure": { "enum": values } } });
    let (no_backoff_list, no_heartbeat, no_version, no_on_failure, no_pending) = (
        without("ack_backoff"),
        without("visibility_heartbeat"),
        without("broker_version"),
        without("on_failure"),
        without("max_ack_pending"),
    );
    let unlimited = json!({ "properties": { "max_receives": { "const": "unlimited" } } });
    // MaxAckPending 0 is the server's "default"; the file writes 1000.
    let pending_not_zero =
        json!({ "properties": { "max_ack_pending": { "not": { "const": 0 } } } });
    let change_visibility = json!({ "required": ["on_failure"], "properties": { "on_failure": { "const": "change_visibility" } } });
    let profiles = json!([
        {
            "not": { "anyOf": [profile("sqs-standard"), profile("rabbitmq-quorum"), profile("rabbitmq-classic"), profile("nats-jetstream")] },
            "required": ["max_receives"],
            "oneOf": one_of_keys(&["retry_interval", "backoff"]),
            "allOf": [no_zero, no_backoff_list, no_heartbeat, no_version, no_on_failure, no_pending]
        },
        { "allOf": [profile("rabbitmq-quorum"), no_backoff_list, no_heartbeat, no_on_failure, no_pending], "not": { "required": ["retry_interval", "backoff"] } },
        // A classic queue has no delivery limit.
        { "allOf": [profile("rabbitmq-classic"), unlimited, no_backoff_list, no_heartbeat, no_version, no_on_failure, no_pending], "not": { "required": ["retry_interval", "backoff"] } },
        {
            "allOf": [profile("sqs-standard"), no_zero, no_backoff_list, no_version, no_pending],
            "required": ["max_receives"],
            "anyOf": [
                { "allOf": [on_failure(&["no_ack"])], "not": retry_keys },
                { "allOf": [change_visibility], "oneOf": one_of_keys(&["retry_interval", "backoff"]) }
            ]
        },
        { "allOf": [profile("nats-jetstream"), no_zero, no_heartbeat, no_version, on_failure(&["nak", "no_ack"]), pending_not_zero], "not": { "required": ["retry_interval", "backoff"] } }
    ]);
    schema.insert("anyOf".into(), profiles);
}

/// A fault's schema: a lost acknowledgement has no reason or class of its
/// own; a crash says where it happens and holds its worker for the service
/// time. Attached to the type (`file::Fault`).
pub(super) fn fault_kinds(schema: &mut schemars::Schema) {
    schema.insert(
        "oneOf".into(),
        json!([
            { "required": ["fail"], "not": { "required": ["at"] } },
            { "required": ["lose_ack"], "not": { "anyOf": [{ "required": ["reason"] }, { "required": ["class"] }, { "required": ["takes"] }, { "required": ["at"] }] } },
            { "required": ["crash", "at"], "not": { "required": ["takes"] } },
            { "required": ["lose_append_ack"], "not": { "anyOf": [{ "required": ["reason"] }, { "required": ["class"] }, { "required": ["takes"] }, { "required": ["at"] }] } }
        ]),
    );
}

/// `[dedup]`'s schema: `lease` and `renew` are write-intent keys, and
/// write-intent needs a lease. Attached to the type (`file::Dedup`).
pub(super) fn dedup_modes(schema: &mut schemars::Schema) {
    schema.insert(
        "anyOf".into(),
        json!([
            { "required": ["mode", "lease"], "properties": { "mode": { "const": "write_intent" } } },
            {
                "properties": { "mode": { "const": "result" } },
                "not": { "anyOf": [{ "required": ["lease"] }, { "required": ["renew"] }] }
            }
        ]),
    );
}

/// A selector is `first` or `until`, not both. Attached to the type
/// (`file::Selector`).
pub(super) fn selector_kinds(schema: &mut schemars::Schema) {
    schema.insert("oneOf".into(), one_of_keys(&["first", "until"]));
}

/// One of `keys`, each alone.
fn one_of_keys(keys: &[&str]) -> serde_json::Value {
    json!(
        keys.iter()
            .map(|k| json!({ "required": [k] }))
            .collect::<Vec<_>>()
    )
}
