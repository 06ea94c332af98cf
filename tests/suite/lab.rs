//! `scenario-run lab`: the pages a learner gets, a changed value giving
//! the run `--set` gives, bad values placed by their control, and a real
//! server on 127.0.0.1 that stops on Ctrl-C.

use crate::common;

use common::{bin, code, run, stdout};
use scenario_run::lab::Lab;
use scenario_run::report::templates::Templates;

const REDRIVE: &str = "scenarios/02-repair-and-redrive.toml";

fn lab(files: &[&str]) -> Lab {
    let dir = env!("CARGO_MANIFEST_DIR");
    let files = files.iter().map(|f| format!("{dir}/{f}")).collect();
    let schema = serde_json::from_str(&scenario_run::cli::schema()).unwrap();
    Lab::new(files, Templates::load(None).ok().unwrap(), None, schema)
}

/// The `<div>` of a control, its class with it.
fn control_div(page: &str, path: &str) -> String {
    let at = page.find(&format!("name=\"{path}\"")).unwrap();
    let start = page[..at].rfind("<div class=\"lab-control").unwrap();
    page[start..at].to_string()
}

fn body(r: &scenario_run::lab::Reply) -> String {
    String::from_utf8(r.body.to_vec()).unwrap()
}

#[test]
fn a_changed_value_runs_what_set_runs() {
    let lab = lab(&[REDRIVE]);
    let r = lab
        .respond("/02-repair-and-redrive.json?delivery.max_receives=5&dedup.result_retention=2h");
    assert_eq!(r.status, 200);
    let served: serde_json::Value = serde_json::from_str(&body(&r)).unwrap();
    let o = run(&[
        "--format",
        "json",
        "--set",
        "delivery.max_receives=5",
        "--set",
        "dedup.result_retention=2h",
        REDRIVE,
    ]);
    let cli: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let cli = &cli["scenarios"][0];
    assert_eq!(served["totals"], cli["totals"]);
    assert_eq!(served["messages"], cli["messages"]);
    assert_eq!(served["status"], cli["status"]);
    // The file's own values give the file's own run.
    let file: serde_json::Value =
        serde_json::from_str(&body(&lab.respond("/02-repair-and-redrive.json"))).unwrap();
    assert_ne!(file["totals"], served["totals"]);
    let o = run(&["--format", "json", REDRIVE]);
    let plain: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(file["totals"], plain["scenarios"][0]["totals"]);
}

#[test]
fn the_page_is_the_report_with_a_panel_that_shows_what_changed() {
    let lab = lab(&[REDRIVE]);
    let page = body(&lab.respond("/02-repair-and-redrive.html?delivery.max_receives=5"));
    assert!(page.contains("<form id=\"lab-panel\""), "{page}");
    assert!(page.contains(">Timeline<"), "the report follows");
    // The changed control is marked with the file's value; the command
    // and the changed file say the same.
    assert!(
        page.contains("name=\"delivery.max_receives\" data-file=\"2\" value=\"5\""),
        "{page}"
    );
    assert!(
        page.contains("<span class=\"lab-was\">file: 2</span>"),
        "{page}"
    );
    assert!(page.contains("--set delivery.max_receives=5"), "{page}");
    let changed = body(&lab.respond("/02-repair-and-redrive.toml?delivery.max_receives=5"));
    assert!(
        changed.contains("max_receives = 5        # per cycle"),
        "{changed}"
    );
    // Without JavaScript the form still runs (a Run button); with it, the
    // page opens at its first step.
    assert!(page.contains("<button type=\"submit\">Run</button>"));
    assert!(page.contains("replaceState(null, \"\", \"#step=0\")"));
}

#[test]
fn a_bad_value_gets_the_message_set_gives_next_to_its_control() {
    let lab = lab(&[REDRIVE]);
    let page = body(
        &lab.respond("/02-repair-and-redrive.html?delivery.max_receives=0&operator.1.wait=abc"),
    );
    let control = |path: &str| {
        let at = page.find(&format!("name=\"{path}\"")).unwrap();
        let end = page[at..].find("</div>").unwrap();
        page[at..at + end].to_string()
    };
    assert!(control("delivery.max_receives").contains("`max_receives` must be at least 1"));
    assert!(control("operator.1.wait").contains("`abc` is not a duration"));
    assert!(!control("delivery.retry_interval").contains("lab-error"));
    let o = run(&[
        "--color",
        "never",
        "--set",
        "delivery.max_receives=0",
        REDRIVE,
    ]);
    assert_eq!(code(&o), 3);
    assert!(stdout(&o).contains("`max_receives` must be at least 1"));
    // The page still shows the file's own run.
    assert!(page.contains("Repair, then redrive everything under stable keys"));
    // ... and says so: the refused values are marked refused, not changed.
    assert!(page.contains("the page shows the file's own run"));
    assert!(!page.contains("This run has changed values"));
    assert!(control_div(&page, "delivery.max_receives").contains("lab-refused"));
    assert!(!page.contains("lab-control lab-set"));
    // The panel folds away, and Back shows the values of the run it goes
    // back to (the browser does not put the later ones back in the form).
    assert!(page.contains("<details class=\"lab-fold\" open>"));
    assert!(page.contains("autocomplete=\"off\""));
    let r = lab.respond("/02-repair-and-redrive.json?delivery.max_receives=0");
    assert_eq!(r.status, 400);
}

#[test]
fn only_the_files_given_are_served() {
    let lab = lab(&[REDRIVE, "scenarios/54-how-long-a-snapshot-waits.toml"]);
    let index = body(&lab.respond("/index.html"));
    assert!(index.contains("href=\"02-repair-and-redrive.html\""));
    assert!(index.contains("href=\"54-how-long-a-snapshot-waits.html\""));
    assert!(index.contains("(9 points)"));
    assert_eq!(lab.respond("/").status, 302);
    for target in [
        "/01-dlq-is-not-proof-nothing-happened.html",
        "/../Cargo.toml",
        "/%2e%2e/Cargo.toml",
        "/02-repair-and-redrive.exe",
        "/etc/passwd",
    ] {
        assert_eq!(lab.respond(target).status, 404, "{target}");
    }
    assert_eq!(
        lab.respond(&format!("/index.html?{}", "a".repeat(20_000)))
            .status,
        414
    );
    // A sweep's axis picks a point: the dataflow sweep fixed to one
    // latency has three points.
    let page = body(&lab.respond("/54-how-long-a-snapshot-waits.html?channel.3.latency=%221ms%22"));
    assert!(page.contains("a sweep of 3 points"), "{page}");
}

#[test]
fn the_panel_compares_the_changed_run_with_the_files_run() {
    let lab = lab(&[REDRIVE, "scenarios/54-how-long-a-snapshot-waits.toml"]);
    let page = body(&lab.respond("/02-repair-and-redrive.html?delivery.max_receives=1"));
    assert!(
        page.contains("href=\"02-repair-and-redrive.compare.html?delivery.max_receives=1\""),
        "{page}"
    );
    let r = lab.respond("/02-repair-and-redrive.compare.html?delivery.max_receives=1");
    assert_eq!(r.status, 200);
    let compared = body(&r);
    // The differences `compare --set-b` finds, on one time axis.
    let o = run(&[
        "compare",
        REDRIVE,
        "--set-b",
        "delivery.max_receives=1",
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = compared.matches("<td class=\"a\">").count();
    assert_eq!(rows, doc["differences"].as_array().unwrap().len());
    assert!(rows > 0);
    assert!(compared.contains("<svg id=\"timeline-a\""));
    assert!(compared.contains("<svg id=\"timeline-b\""));
    // Back to the index and to the changed page; one hatch pattern per
    // timeline (ids unique on the page).
    assert!(
        compared.contains("<a href=\"index.html\">All scenarios</a> · <a href=\"02-repair-and-redrive.html?delivery.max_receives=1\">02-repair-and-redrive</a>"),
        "{compared}"
    );
    let mut ids: Vec<&str> = compared
        .split(" id=\"")
        .skip(1)
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect();
    let all = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all, "an id used twice");
    assert!(compared.contains("fill=\"url(#timeline-b-hatch)\""));
    // A side that cannot run is said, with 400; a dataflow is refused.
    let r = lab.respond("/02-repair-and-redrive.compare.html?delivery.max_receives=0");
    assert_eq!(r.status, 400);
    assert!(
        body(&r).contains("`max_receives` must be at least 1"),
        "{}",
        body(&r)
    );
    // A sweep compares one point: the file's run there against the
    // changed one; until every swept path is fixed there is no link.
    let sweep = self::lab(&["scenarios/28-poison-lab-sweep.toml"]);
    let page = body(&sweep.respond("/28-poison-lab-sweep.html?delivery.max_receives=3"));
    assert!(!page.contains(".compare.html"));
    let point = "traffic.1.mix.1.share=0.05&delivery.max_receives=3&delivery.backoff.base=1s";
    let page = body(&sweep.respond(&format!(
        "/28-poison-lab-sweep.html?{point}&delivery.retry_interval=2s"
    )));
    assert!(page.contains("28-poison-lab-sweep.compare.html?"), "{page}");
    let r = sweep.respond(&format!(
        "/28-poison-lab-sweep.compare.html?{point}&workers.count=2"
    ));
    assert_eq!(r.status, 200, "{}", body(&r));
    let compared = body(&r);
    let label = |side: &str| {
        let row = compared
            .split(&format!("<th scope=\"row\">{side}</th>"))
            .nth(1)
            .unwrap();
        row.split("</code>").next().unwrap().to_string()
    };
    // A is the file's run at the point, B the same point with 2 workers.
    for side in ["A", "B"] {
        assert!(
            label(side).contains("--set delivery.backoff.base=1s"),
            "{}",
            label(side)
        );
    }
    assert!(!label("A").contains("workers.count"), "{}", label("A"));
    assert!(
        label("B").contains("--set workers.count=2"),
        "{}",
        label("B")
    );
    assert!(
        compared.contains("<td><code>max_in_flight</code></td>"),
        "{compared}"
    );
    let flow = body(&lab.respond("/54-how-long-a-snapshot-waits.html"));
    assert!(
        !flow.contains(".compare.html"),
        "a dataflow page offers no comparison"
    );
    let r = lab.respond("/54-how-long-a-snapshot-waits.compare.html");
    assert_eq!(r.status, 400);
    assert!(body(&r).contains("is a dataflow"), "{}", body(&r));
    assert_eq!(lab.respond("/nothing.compare.html").status, 404);
}

#[test]
fn the_index_compares_two_of_the_files() {
    let (a, b) = (REDRIVE, "scenarios/04-new-identity-duplicates.toml");
    let lab = lab(&[a, b, "scenarios/54-how-long-a-snapshot-waits.toml"]);
    let index = body(&lab.respond("/index.html"));
    assert!(
        index.contains("<form action=\"compare.html\" method=\"get\">"),
        "{index}"
    );
    // Only queue runs are offered (not the dataflow sweep).
    assert!(
        index.contains("<option value=\"04-new-identity-duplicates\">"),
        "{index}"
    );
    assert!(
        !index.contains("<option value=\"54-how-long-a-snapshot-waits\""),
        "{index}"
    );
    let r = lab.respond("/compare.html?a=02-repair-and-redrive&b=04-new-identity-duplicates");
    assert_eq!(r.status, 200);
    let page = body(&r);
    assert!(page.contains("<nav class=\"meta\"><a href=\"index.html\">All scenarios</a></nav>"));
    let o = run(&["compare", a, b, "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = page.matches("<td class=\"a\">").count();
    assert_eq!(rows, doc["differences"].as_array().unwrap().len());
    assert!(page.contains("transient~r1"), "{page}");
    assert_eq!(
        lab.respond("/compare.html?a=02-repair-and-redrive").status,
        404
    );
    assert_eq!(
        lab.respond("/compare.html?a=02-repair-and-redrive&b=54-how-long-a-snapshot-waits")
            .status,
        400
    );
}

/// A lab on a free port of 127.0.0.1: the process, its standard output
/// after the first line, and the port that line names.
#[cfg(unix)]
fn started(
    extra: &[&str],
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
    u16,
) {
    use std::io::BufRead;
    let mut child = bin()
        .arg("lab")
        .args(extra)
        .arg(REDRIVE)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.starts_with("lab: http://127.0.0.1:"), "{line}");
    let port = line["lab: http://127.0.0.1:".len()..]
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    (child, out, port)
}

#[cfg(unix)]
#[test]
fn the_server_binds_loopback_serves_and_stops_on_ctrl_c() {
    use std::io::{Read, Write};
    let (mut child, mut out, port) = started(&[]);
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let get =
        format!("GET /index.html HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    s.write_all(get.as_bytes()).unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains("02-repair-and-redrive.html"));
    // Not on another address of the machine.
    let elsewhere = std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|u| u.connect("10.255.255.1:9").map(|()| u))
        .and_then(|u| u.local_addr());
    if let Ok(addr) = elsewhere
        && !addr.ip().is_loopback()
        && !addr.ip().is_unspecified()
    {
        assert!(std::net::TcpStream::connect((addr.ip(), port)).is_err());
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert!(status.success(), "{status:?}");
    assert_eq!(rest, "lab: stopped\n");
}

#[cfg(unix)]
#[test]
fn a_closed_standard_output_does_not_stop_or_crash_the_lab() {
    let (child, out, port) = started(&[]);
    drop(out);
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let done = child.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(!String::from_utf8_lossy(&done.stderr).contains("panicked"));
}

#[cfg(unix)]
#[test]
fn a_port_in_use_is_an_error_and_exit_5() {
    let (mut first, _out, port) = started(&[]);
    let o = run(&["lab", "--port", &port.to_string(), REDRIVE]);
    unsafe { libc::kill(first.id() as i32, libc::SIGINT) };
    let _ = first.wait();
    assert_eq!(code(&o), 5);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        err.starts_with(&format!("error: cannot listen on 127.0.0.1:{port}:")),
        "{err}"
    );
    // A glob that names nothing, likewise.
    let o = run(&["lab", "no-such-folder/*.toml"]);
    assert_eq!(code(&o), 2);
}

/// One request to the lab at `port`, its whole answer (headers and body).
#[cfg(unix)]
fn ask(port: u16, request: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    // A lab that does not answer fails the test, not hangs it.
    s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut reply = Vec::new();
    let _ = s.read_to_end(&mut reply);
    String::from_utf8_lossy(&reply).into_owned()
}

/// A header's value in an answer.
#[cfg(unix)]
fn header<'a>(reply: &'a str, name: &str) -> Option<&'a str> {
    let head = reply.split("\r\n\r\n").next()?;
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Another site's name pointed at 127.0.0.1 (DNS rebinding), or a page
/// of another site, reads nothing; the lab's own names and pages do; HEAD
/// says the length GET sends; the icon is there.
#[cfg(unix)]
#[test]
fn the_server_answers_its_own_host_and_pages_only_and_head_tells_the_length() {
    let (mut child, _out, port) = started(&[]);
    let get = |path: &str, host: &str, extra: &str| {
        ask(
            port,
            &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n"),
        )
    };
    let ours = format!("127.0.0.1:{port}");
    let page = "/02-repair-and-redrive.html";
    assert!(get(page, &ours, "").starts_with("HTTP/1.1 200"));
    assert!(get(page, &format!("localhost:{port}"), "").starts_with("HTTP/1.1 200"));
    let rebound = get(page, &format!("attacker.example:{port}"), "");
    assert!(rebound.starts_with("HTTP/1.1 403"), "{rebound}");
    assert!(!rebound.contains("<html"), "{rebound}");
    let elsewhere = get(page, &ours, "Origin: http://attacker.example\r\n");
    assert!(elsewhere.starts_with("HTTP/1.1 403"), "{elsewhere}");
    let own = get(page, &ours, &format!("Origin: http://127.0.0.1:{port}\r\n"));
    assert!(
        own.starts_with("HTTP/1.1 200"),
        "{}",
        &own[..200.min(own.len())]
    );
    // HEAD: the length of what GET sends, and no body.
    let full = get(page, &ours, "");
    let head = ask(
        port,
        &format!("HEAD {page} HTTP/1.1\r\nHost: {ours}\r\nConnection: close\r\n\r\n"),
    );
    let body_len = full.len() - full.find("\r\n\r\n").unwrap() - 4;
    assert_eq!(
        header(&head, "Content-Length"),
        Some(body_len.to_string().as_str())
    );
    assert!(head.ends_with("\r\n\r\n"), "{head}");
    // The icon: an ICO of one 16-pixel image.
    let icon = get("/favicon.ico", &ours, "");
    assert!(icon.starts_with("HTTP/1.1 200"), "{icon}");
    assert_eq!(header(&icon, "Content-Type"), Some("image/x-icon"));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let _ = child.wait();
}

/// A client that asks for a large answer and never reads it holds only
/// its own: another client is answered meanwhile. The answer is a 9 MB
/// file (a scenario with a long comment) as the `.toml` download gives
/// it, more than the socket buffers hold, so its write waits on the
/// client.
#[cfg(unix)]
#[test]
fn a_client_that_does_not_read_holds_up_no_other() {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let dir = common::scratch("lab-stalled");
    let padded = dir.join("padded.toml");
    let mut text = std::fs::read_to_string(REDRIVE).unwrap();
    for _ in 0..90_000 {
        text.push_str(&format!("# {}\n", "x".repeat(98)));
    }
    std::fs::write(&padded, text).unwrap();
    let (mut child, _out, port) = started(&[padded.to_str().unwrap()]);
    let mut stalled = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    // A small window, and nothing read.
    let small: libc::c_int = 4096;
    unsafe {
        libc::setsockopt(
            stalled.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&small as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
    let big = format!("GET /padded.toml HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    stalled.write_all(big.as_bytes()).unwrap();
    // Once the answer is made, its write is stuck on that client.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let other = ask(
        port,
        &format!("GET /index.html HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"),
    );
    assert!(other.starts_with("HTTP/1.1 200"), "{other}");
    drop(stalled);
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let _ = child.wait();
}

/// A file named `compare.toml` (or `index.toml`) is served under a name of
/// its own: the lab's own pages keep theirs.
#[test]
fn a_file_named_like_a_page_of_the_lab_is_served_under_its_own_name() {
    let dir = common::scratch("lab-compare-name");
    let compare = dir.join("compare.toml");
    std::fs::copy(
        format!("{}/{REDRIVE}", env!("CARGO_MANIFEST_DIR")),
        &compare,
    )
    .unwrap();
    let schema = serde_json::from_str(&scenario_run::cli::schema()).unwrap();
    let lab = Lab::new(
        vec![compare.to_string_lossy().into_owned()],
        Templates::load(None).ok().unwrap(),
        None,
        schema,
    );
    let index = body(&lab.respond("/index.html"));
    // The page's name: the file's path tail that is not a page of the lab.
    let name = index
        .split("href=\"")
        .skip(1)
        .filter_map(|h| h.split('"').next())
        .find(|h| h.ends_with("compare.html") && *h != "compare.html")
        .unwrap_or_else(|| panic!("a link to the file's page in {index}"));
    let page = lab.respond(&format!("/{name}"));
    assert_eq!(page.status, 200);
    assert!(body(&page).contains("<html"));
    // /compare.html stays the comparison of two files.
    assert_eq!(lab.respond("/compare.html").status, 404);
}

/// A run longer than the lab waits: the request is told so (503, with
/// when to come back), the run goes on, and a later request gets its page.
#[test]
fn a_run_longer_than_the_lab_waits_is_said_so_and_its_page_kept() {
    let lab = lab(&["scenarios/17-outage-100k-per-hour.toml"])
        .with_rerun_budget(std::time::Duration::from_millis(1));
    let page = "/17-outage-100k-per-hour.html";
    let first = lab.respond(page);
    assert_eq!(first.status, 503, "{}", body(&first));
    assert!(body(&first).contains("takes longer than the lab waits (1ms)"));
    assert!(
        first
            .headers
            .iter()
            .any(|(n, v)| n == "Retry-After" && v == "10")
    );
    // The page is made meanwhile, and kept: asked again, it is there.
    let mut later = lab.respond(page);
    for _ in 0..600 {
        if later.status == 200 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        later = lab.respond(page);
    }
    assert_eq!(later.status, 200);
    assert!(body(&later).contains("<html"));
}

/// A baseline is kept under the file's name and version: a changed value
/// runs the same file, so the changed run's page has the version of the
/// file's own (and its baseline is there to compare with), while an
/// edited file is another version.
#[test]
fn a_changed_run_keeps_the_files_version_so_its_baseline_stays() {
    let version = |lab: &Lab, target: &str| {
        let page = body(&lab.respond(target));
        let data = page
            .split("id=\"page-data\">")
            .nth(1)
            .and_then(|rest| rest.split("</script>").next())
            .expect("the page's data");
        let data: serde_json::Value = serde_json::from_str(data).unwrap();
        data["hash"].as_str().unwrap().to_string()
    };
    let lab = lab(&[REDRIVE]);
    let own = version(&lab, "/02-repair-and-redrive.html");
    assert_eq!(
        version(&lab, "/02-repair-and-redrive.html?delivery.max_receives=5"),
        own
    );
    let dir = common::scratch("lab-version");
    let edited = dir.join("02-repair-and-redrive.toml");
    let text = std::fs::read_to_string(REDRIVE).unwrap();
    std::fs::write(&edited, format!("{text}\n# edited\n")).unwrap();
    let schema = serde_json::from_str(&scenario_run::cli::schema()).unwrap();
    let other = Lab::new(
        vec![edited.to_string_lossy().into_owned()],
        Templates::load(None).ok().unwrap(),
        None,
        schema,
    );
    assert_ne!(version(&other, "/02-repair-and-redrive.html"), own);
}

/// A sweep with every swept value fixed is one run, and its page is that
/// run's whole page: its timeline, its alarms and when they fired (the
/// description's 9.5s at 1% poison, 3 receives, 100ms, is 9s549ms;
/// its 1m24.7s with 10 receives and 1s is 1m24s741ms, as `show` of the
/// point says). Each row of the sweep's table links to its point's
/// page.
#[test]
fn a_sweep_point_is_a_run_with_its_whole_page_and_each_row_links_to_it() {
    let lab = lab(&["scenarios/28-poison-lab-sweep.toml"]);
    let point = |q: &str| body(&lab.respond(&format!("/28-poison-lab-sweep.html?{q}")));
    let early =
        point("traffic.1.mix.1.share=0.01&delivery.max_receives=3&delivery.backoff.base=100ms");
    assert!(early.contains("id=\"timeline\""), "not a run's page");
    assert!(early.contains("id=\"alarms\""));
    assert!(early.contains("9s549ms"), "the alarm's time");
    let late =
        point("traffic.1.mix.1.share=0.01&delivery.max_receives=10&delivery.backoff.base=1s");
    assert!(late.contains("1m24s741ms"), "the alarm's time");
    // Not every path fixed: the table, each row a link to its point.
    let table = point("delivery.max_receives=3");
    assert!(!table.contains("id=\"timeline\""));
    let link = "28-poison-lab-sweep.html?traffic.1.mix.1.share=0.01&amp;delivery.max_receives=3&amp;delivery.backoff.base=100ms#step=0";
    assert!(table.contains(link), "{table}");
    assert_eq!(table.matches("title=\"this point's run\"").count(), 6);
    // Followed, a link's values are the panel's: each swept value chosen,
    // shown as a value (`100ms`), not as TOML (`"100ms"`).
    let linked =
        point("traffic.1.mix.1.share=0.01&delivery.max_receives=3&delivery.backoff.base=100ms");
    assert!(
        linked.contains("<option value=\"&quot;100ms&quot;\" selected>100ms</option>"),
        "{}",
        control_div(&linked, "delivery.backoff.base")
    );
}

/// Pages made at once are bounded: a run past its budget goes on after
/// its request is answered, so ever new values would start ever more
/// runs; past `MAX_RERUNS` a request is told to ask again.
#[test]
fn runs_made_at_once_are_bounded() {
    use scenario_run::lab::MAX_RERUNS;
    let lab = lab(&["scenarios/17-outage-100k-per-hour.toml"])
        .with_rerun_budget(std::time::Duration::from_millis(1));
    let ask = |receives: usize| {
        lab.respond(&format!(
            "/17-outage-100k-per-hour.html?delivery.max_receives={receives}"
        ))
    };
    for receives in 0..MAX_RERUNS {
        let r = ask(receives + 2);
        assert_eq!(r.status, 503);
        assert!(
            body(&r).contains("takes longer than the lab waits"),
            "{}",
            body(&r)
        );
    }
    let r = ask(MAX_RERUNS + 2);
    assert_eq!(r.status, 503);
    assert!(
        body(&r).contains(&format!("the lab is making {MAX_RERUNS} pages already")),
        "{}",
        body(&r)
    );
    assert!(
        r.headers
            .iter()
            .any(|(n, v)| n == "Retry-After" && v == "10")
    );
}

/// The values a trainer adds run as `--set` and `--unset` run them: the
/// seed's four operator choices on one page (redrive only one message is
/// one of them), a step added to a file without one, a receive budget
/// typed where the file says "unlimited", the store switched on, and a
/// restart's new `resume` without the key it refuses. None is refused,
/// and each page's JSON is the command's.
#[test]
fn values_a_trainer_adds_run_as_the_command_the_panel_shows() {
    let files = [
        "scenarios/10-redrive-only-poison.toml",
        "scenarios/18-fifo-poison-crash-loop.toml",
        "scenarios/43-stale-checkpoint-duplicates-and-gaps.toml",
    ];
    let lab = lab(&files);
    let cases: [(&str, &str, &[&str]); 4] = [
        (
            "10-redrive-only-poison",
            "operator.1.action=redrive_all",
            &[
                "--set",
                "operator.1.action=redrive_all",
                "--unset",
                "operator.1.only",
            ],
        ),
        (
            "10-redrive-only-poison",
            "operator.1.action=redrive+only+uncertain",
            &[
                "--set",
                "operator.1.action=redrive",
                "--set",
                "operator.1.only=[\"uncertain\"]",
            ],
        ),
        (
            "18-fifo-poison-crash-loop",
            "delivery.max_receives=5&operator.1.action=purge&dedup.enabled=true",
            &[
                "--set",
                "delivery.max_receives=5",
                "--set",
                "operator.1.action=purge",
                "--set",
                "dedup.enabled=true",
            ],
        ),
        (
            "43-stale-checkpoint-duplicates-and-gaps",
            "restart.1.resume=committed",
            &[
                "--set",
                "restart.1.resume=committed",
                "--unset",
                "restart.1.checkpoint_age",
            ],
        ),
    ];
    for (name, query, args) in cases {
        let page = body(&lab.respond(&format!("/{name}.html?{query}")));
        assert!(page.contains("<p class=\"lab-changed\">"), "{name}?{query}");
        assert!(!page.contains("<p class=\"lab-refused\""), "{name}?{query}");
        let served: serde_json::Value =
            serde_json::from_str(&body(&lab.respond(&format!("/{name}.json?{query}")))).unwrap();
        let file = files.iter().find(|f| f.contains(name)).unwrap();
        let mut argv = vec!["--format", "json"];
        argv.extend(args);
        argv.push(file);
        let cli: serde_json::Value = serde_json::from_str(&stdout(&run(&argv))).unwrap();
        assert_eq!(
            served["totals"], cli["scenarios"][0]["totals"],
            "{name}?{query}"
        );
        // The changed file, run as it is, is the same run.
        let changed = body(&lab.respond(&format!("/{name}.toml?{query}")));
        let (s, _) = scenario_run::scenario::load_str(file, &changed).unwrap();
        let outcome = scenario_run::engine::run(&s, scenario_run::engine::Recorder::Off).unwrap();
        assert_eq!(
            served["totals"]["acked"].as_u64(),
            Some(outcome.totals.acked),
            "{name}?{query}"
        );
    }
    // The operator choice: one select, the file's choice selected.
    let page = body(&lab.respond("/10-redrive-only-poison.html"));
    let choice = &page[page.find("name=\"operator.1.action\"").unwrap()..];
    let choice = &choice[..choice.find("</select>").unwrap()];
    for option in ["hold", "redrive all", "redrive only poison", "purge"] {
        assert!(
            choice.contains(&format!(">{option}</option>")),
            "{option}: {choice}"
        );
    }
    assert!(
        choice.contains("value=\"redrive only poison\" selected"),
        "{choice}"
    );
    assert!(!page.contains("name=\"operator.1.only\""));
}
