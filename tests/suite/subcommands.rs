//! `new`, `schema` and `completions`.

use crate::common;

use common::{bin, code, run, scratch, stderr, stdout};

fn toml_as_json(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    let value: toml::Value = toml::from_str(&text).unwrap();
    serde_json::to_value(value).unwrap()
}

#[test]
fn the_schema_accepts_every_bundled_scenario_and_refuses_mistakes() {
    let o = run(&["schema"]);
    assert_eq!(code(&o), 0);
    let schema: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(schema["title"], "scenario-run scenario file");
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let mut checked = 0;
    // The bundled scenarios and the conformance scenarios.
    let files = std::fs::read_dir("scenarios")
        .unwrap()
        .chain(std::fs::read_dir("scenarios/conformance").unwrap());
    for entry in files {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue;
        }
        let doc = toml_as_json(&path);
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        checked += 1;
    }
    assert_eq!(checked, 75 + 22);
    // What the tool refuses for its shape, the schema refuses too.
    for bad in [
        "unknown-key",
        "unknown-action",
        "wrong-type",
        "bare-number-duration",
        "dataflow-mistakes",
    ] {
        let doc = toml_as_json(&std::path::Path::new("tests/bad").join(format!("{bad}.toml")));
        assert!(!validator.is_valid(&doc), "{bad} passed the schema");
    }
    // A comparison table is one of four forms.
    let mut doc = toml_as_json(std::path::Path::new("scenarios/02-repair-and-redrive.toml"));
    doc["expect"]["effects"] = serde_json::json!({ "at_least": 3 });
    assert!(validator.is_valid(&doc));
    doc["expect"]["effects"] = serde_json::json!({ "more_than": 3 });
    assert!(!validator.is_valid(&doc));
    // A sweep's columns name each measure once.
    let mut doc = toml_as_json(std::path::Path::new("scenarios/28-poison-lab-sweep.toml"));
    doc["sweep"]["columns"] = serde_json::json!(["acked", "quarantined"]);
    assert!(validator.is_valid(&doc));
    doc["sweep"]["columns"] = serde_json::json!(["acked", "quarantined", "acked"]);
    assert!(!validator.is_valid(&doc));
    // A dataflow's columns are answers, not totals.
    let mut doc = toml_as_json(std::path::Path::new(
        "scenarios/54-how-long-a-snapshot-waits.toml",
    ));
    doc["sweep"]["columns"] = serde_json::json!(["node.C.state", "snapshot.2.outcome"]);
    assert!(validator.is_valid(&doc));
    doc["sweep"]["columns"] = serde_json::json!(["acked"]);
    assert!(!validator.is_valid(&doc));
    // MaxAckPending is JetStream's, and never 0.
    let nats = "scenarios/conformance/nats-05-max-ack-pending-blocks-the-stream.toml";
    let mut doc = toml_as_json(std::path::Path::new(nats));
    doc["delivery"]["max_ack_pending"] = serde_json::json!("unlimited");
    assert!(validator.is_valid(&doc));
    doc["delivery"]["max_ack_pending"] = serde_json::json!(0);
    assert!(!validator.is_valid(&doc));
    doc["delivery"]["max_ack_pending"] = serde_json::json!(2);
    doc["delivery"]["profile"] = serde_json::json!("rabbitmq-quorum");
    doc["delivery"]
        .as_object_mut()
        .unwrap()
        .remove("retry_interval");
    assert!(!validator.is_valid(&doc));
    doc["delivery"]
        .as_object_mut()
        .unwrap()
        .remove("max_ack_pending");
    assert!(validator.is_valid(&doc));
}

#[test]
fn new_writes_a_starter_that_passes_and_never_overwrites() {
    let d = scratch("new");
    let o = bin()
        .current_dir(&d)
        .args(["new", "retry-storm"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let path = d.join("retry-storm.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("name = \"retry storm\""));
    assert!(text.contains("#:schema"));
    let o = bin()
        .current_dir(&d)
        .arg("retry-storm.toml")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert!(stdout(&o).contains("PASS  retry-storm.toml  retry storm (7 expectations)"));

    std::fs::write(&path, "mine\n").unwrap();
    let o = bin()
        .current_dir(&d)
        .args(["new", "retry-storm.toml"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("already exists; not overwritten"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine\n");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn completions_cover_the_options_and_subcommands() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = run(&["completions", shell]);
        assert_eq!(code(&o), 0, "{shell}");
        let text = stdout(&o);
        for word in ["report-format", "golden", "summary-markdown", "schema"] {
            assert!(text.contains(word), "{shell} lacks {word}");
        }
    }
    let o = run(&["completions", "tcsh"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn new_into_a_missing_folder_is_a_clear_error() {
    let o = run(&["new", "/nonexistent-folder/incident"]);
    assert_eq!(code(&o), 5);
    assert!(
        stderr(&o).contains("cannot write /nonexistent-folder/incident.toml"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("create it first: mkdir -p /nonexistent-folder"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn new_quotes_a_path_the_shell_would_split() {
    let d = scratch("new-quoted");
    let o = bin()
        .current_dir(&d)
        .args(["new", "my incident"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "wrote my incident.toml; run it with: scenario-run 'my incident.toml'\n"
    );
    let o = bin()
        .current_dir(&d)
        .args(["my incident.toml"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_schema_names_exactly_the_tables_the_reader_knows() {
    let schema: serde_json::Value = serde_json::from_str(&stdout(&run(&["schema"]))).unwrap();
    for (def, tables) in [
        ("QueueFile", scenario_run::scenario::file::TABLES.to_vec()),
        (
            "DataflowFile",
            scenario_run::dataflow::file::TABLES.to_vec(),
        ),
    ] {
        let mut props: Vec<&str> = schema["$defs"][def]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut tables = tables;
        props.sort();
        tables.sort();
        assert_eq!(props, tables, "{def}");
    }
}

/// Every key the JSON Schema knows, at any depth.
fn schema_keys(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::Object(props)) = map.get("properties") {
                out.extend(props.keys().cloned());
            }
            map.values().for_each(|x| schema_keys(x, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|x| schema_keys(x, out)),
        _ => {}
    }
}

#[test]
fn every_key_of_the_schema_is_in_the_format_reference() {
    let o = run(&["schema"]);
    let schema: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut keys = std::collections::BTreeSet::new();
    schema_keys(&schema, &mut keys);
    assert!(keys.len() > 40, "only {} keys: {keys:?}", keys.len());
    let reference = std::fs::read_to_string("docs/format.md").unwrap();
    let missing: Vec<&String> = keys
        .iter()
        .filter(|k| {
            let written = [
                format!("`{k}`"),
                format!("{k} ="),
                format!("[{k}]"),
                format!("[[{k}]]"),
                format!(".{k}]"),
            ];
            !written.iter().any(|w| reference.contains(w.as_str()))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "keys of the JSON Schema missing from the format reference, docs/format.md: {missing:?}"
    );
}

/// The files of tests/bad a JSON Schema cannot refuse: the mistake is in a
/// relation between values (ids, references, sizes) or in the text itself.
const BEYOND_THE_SCHEMA: [&str; 16] = [
    "duplicate-id",
    "empty",
    // An event expectation's keys depend on its kind and on [log].
    "event-expectation-mistakes",
    "expect-unknown-message",
    "huge-generator",
    // Cross-key rules (a key that depends on another's value).
    "log-event-without-log",
    "log-exactly-once-mistakes",
    "log-mistakes",
    "not-utf8",
    "only-missing-id",
    "overflowing-duration",
    "several-syntax-errors",
    "syntax-error",
    "too-deep",
    "unknown-generated-id",
    // Keys that only some strategies take.
    "write-direct-mistakes",
];

#[test]
fn the_schema_takes_each_profiles_consumer_settings_and_no_others() {
    let o = run(&["schema"]);
    let schema: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let valid = |delivery: &str| {
        let text = format!("[delivery]\n{delivery}[[message]]\nid = \"a\"\n");
        let doc = serde_json::to_value(text.parse::<toml::Table>().unwrap()).unwrap();
        validator.is_valid(&doc)
    };
    let sqs = "profile = \"sqs-standard\"\nmax_receives = 3\n";
    for (delivery, expected) in [
        (format!("{sqs}visibility_heartbeat = \"10s\"\n"), true),
        (
            format!("{sqs}on_failure = \"change_visibility\"\nretry_interval = \"1s\"\n"),
            true,
        ),
        (format!("{sqs}on_failure = \"change_visibility\"\n"), false),
        (format!("{sqs}retry_interval = \"1s\"\n"), false),
        (format!("{sqs}on_failure = \"nak\"\n"), false),
        (
            "profile = \"nats-jetstream\"\non_failure = \"no_ack\"\nack_backoff = [\"1s\"]\n"
                .into(),
            true,
        ),
        (
            "profile = \"nats-jetstream\"\non_failure = \"change_visibility\"\n".into(),
            false,
        ),
        (
            "profile = \"nats-jetstream\"\nvisibility_heartbeat = \"1s\"\n".into(),
            false,
        ),
        (
            "profile = \"rabbitmq-quorum\"\nbroker_version = \"3.10.8\"\n".into(),
            true,
        ),
        (
            "profile = \"rabbitmq-quorum\"\nbroker_version = \"3\"\n".into(),
            false,
        ),
        (
            "profile = \"rabbitmq-quorum\"\non_failure = \"nak\"\n".into(),
            false,
        ),
        (
            "max_receives = 2\nretry_interval = \"1s\"\nbroker_version = \"4.1\"\n".into(),
            false,
        ),
        ("profile = \"rabbitmq-classic\"\n".into(), true),
        (
            "profile = \"rabbitmq-classic\"\nmax_receives = \"unlimited\"\n".into(),
            true,
        ),
        (
            "profile = \"rabbitmq-classic\"\nmax_receives = 5\n".into(),
            false,
        ),
        (
            "profile = \"rabbitmq-classic\"\nbroker_version = \"3.10\"\n".into(),
            false,
        ),
        (
            "profile = \"nats-jetstream\"\nmax_ack_pending = 1\n".into(),
            true,
        ),
        (
            "profile = \"sqs-standard\"\nmax_receives = 3\nmax_ack_pending = 1\n".into(),
            false,
        ),
    ] {
        assert_eq!(valid(&delivery), expected, "{delivery}");
    }
}

#[test]
fn the_schema_refuses_every_bad_file_it_can_express() {
    let o = run(&["schema"]);
    let schema: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut passed = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir("tests/bad")
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let doc = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| text.parse::<toml::Table>().ok())
            .filter(|table| !table.is_empty())
            .map(|table| serde_json::to_value(table).unwrap());
        match doc {
            Some(doc) if !validator.is_valid(&doc) => {}
            _ => passed.push(name),
        }
    }
    assert_eq!(passed, BEYOND_THE_SCHEMA);
}

/// What bash completes after `words` (the last one being typed), with the
/// generated script loaded as a user's shell would load it.
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let line = words
        .iter()
        .map(|w| format!("'{w}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let program = format!(
        "source '{}'\nCOMP_WORDS=({line})\nCOMP_CWORD={}\n_scenario__run scenario-run '{}' '{}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        words.len() - 1,
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(program)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_each_subcommand_s_own_options() {
    let d = common::scratch("bash-completion");
    let script = d.join("scenario-run.bash");
    let o = run(&["completions", "bash"]);
    assert_eq!(code(&o), 0);
    std::fs::write(&script, stdout(&o)).unwrap();
    let top = bash_completes(&script, &["scenario-run", ""]);
    for word in ["show", "check", "merge", "--report"] {
        assert!(
            top.iter().any(|w| w == word),
            "top level lacks {word}: {top:?}"
        );
    }
    for (sub, option) in [
        ("show", "--at"),
        ("check", "--set"),
        ("merge", "--help"),
        ("completions", "bash"),
    ] {
        let words = bash_completes(&script, &["scenario-run", sub, ""]);
        assert!(
            words.iter().any(|w| w == option),
            "{sub} lacks {option}: {words:?}"
        );
        assert!(!words.iter().any(|w| w == "--report"), "{sub}: {words:?}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn conform_writes_a_broker_url_with_its_control_characters_escaped() {
    let o = common::run(&[
        "conform",
        "--broker",
        "sqs://x\n\u{1b}[2JCONFORMS  fake.toml",
        "scenarios/conformance/*.toml",
    ]);
    let err = common::stderr(&o);
    assert_eq!(common::code(&o), 2, "{err}");
    assert!(err.contains(r"sqs://x\n\u{1b}[2JCONFORMS"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// `show --at T` heads what it shows "as of T": past 10,000 messages
/// (where the transcript is omitted) and for a dataflow, whose states
/// are read at T, not at the last event before it.
#[test]
fn show_at_says_as_of_the_time_asked_for() {
    let o = run(&[
        "show",
        "--at",
        "10m",
        "scenarios/17-outage-100k-per-hour.toml",
    ]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        out.contains("\nsnapshot as of 10m (first messages):\n"),
        "{out}"
    );
    assert!(!out.contains("final snapshot"), "{out}");
    let o = run(&["show", "scenarios/17-outage-100k-per-hour.toml"]);
    assert!(stdout(&o).contains("\nfinal snapshot (first messages):\n"));
    let o = run(&[
        "show",
        "--at",
        "9ms",
        "scenarios/38-chandy-lamport-abort-and-retry.toml",
    ]);
    let out = stdout(&o);
    assert!(out.contains("as of 9ms"), "{out}");
    // The last event before 9ms is at 5ms; the states are those of 9ms.
    assert!(out.ends_with("states at 9ms: A 10, B 5, C 1\n"), "{out}");
}

/// `new NAME --kind K`: a starter for a log, a write to several sinks
/// and a dataflow, each passing as written, named for the file.
#[test]
fn new_offers_a_starter_of_each_kind_that_passes_as_written() {
    let d = scratch("new-kinds");
    for (kind, expectations) in [("queue", 7), ("log", 8), ("write", 7), ("dataflow", 5)] {
        let file = format!("my-{kind}.toml");
        let o = bin()
            .current_dir(&d)
            .args(["new", &format!("my-{kind}"), "--kind", kind])
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{kind}: {}", stderr(&o));
        let text = std::fs::read_to_string(d.join(&file)).unwrap();
        assert!(text.contains(&format!("name = \"my {kind}\"")), "{text}");
        assert!(text.contains(&format!("scenario-run {file}")), "{text}");
        let o = bin().current_dir(&d).arg(&file).output().unwrap();
        assert_eq!(code(&o), 0, "{kind}: {}", stdout(&o));
        assert!(
            stdout(&o).contains(&format!(
                "PASS  {file}  my {kind} ({expectations} expectations)"
            )),
            "{}",
            stdout(&o)
        );
    }
    let o = bin()
        .current_dir(&d)
        .args(["new", "x", "--kind", "stream"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("possible values: queue, log, write, dataflow"),
        "{}",
        stderr(&o)
    );
}
