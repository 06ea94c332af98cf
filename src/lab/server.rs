//! The lab's HTTP server: bound to 127.0.0.1 (never another address), GET
//! and HEAD only, stopped cleanly by Ctrl-C.
//!
//! Each request is answered on a thread of its own (at most
//! [`MAX_IN_FLIGHT`] at once; past that a request is told the lab is busy),
//! so a client that stalls, or does not read its answer, holds only its
//! own thread, and a long rerun holds no one but its own client (and at
//! most [`super::RERUN_BUDGET`] of it). A request is answered only when it
//! names the lab as its host (`127.0.0.1` or `localhost` at the lab's port)
//! and, when it says where it comes from, comes from the lab's own pages:
//! a web page elsewhere whose name was pointed at 127.0.0.1 (DNS rebinding)
//! reads nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::{Lab, Reply};

/// Requests answered at once, each on its own thread.
pub const MAX_IN_FLIGHT: usize = 64;

/// Serves `lab` on 127.0.0.1:`port` (0: a free port) until Ctrl-C;
/// `ready` is called with the URL once the port is bound. Returns why it
/// could not start.
pub fn serve(lab: Lab, port: u16, ready: impl FnOnce(&str)) -> Result<(), String> {
    let server = tiny_http::Server::http(("127.0.0.1", port))
        .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    let server = Arc::new(server);
    let bound = server.server_addr().to_ip().map_or(port, |a| a.port());
    let stopped = Arc::new(AtomicBool::new(false));
    {
        let (server, stopped) = (Arc::clone(&server), Arc::clone(&stopped));
        // A second lab in the same process keeps the first handler.
        let _ = ctrlc::set_handler(move || {
            stopped.store(true, Ordering::SeqCst);
            server.unblock();
        });
    }
    ready(&format!("http://127.0.0.1:{bound}/"));
    let in_flight = Arc::new(AtomicUsize::new(0));
    for request in server.incoming_requests() {
        if stopped.load(Ordering::SeqCst) {
            break;
        }
        if in_flight.load(Ordering::SeqCst) >= MAX_IN_FLIGHT {
            // A few bytes: written at once, whatever the client does.
            let busy = Reply::text(503, "the lab is answering as many requests as it can");
            answer_with(request, busy);
            continue;
        }
        in_flight.fetch_add(1, Ordering::SeqCst);
        let (lab, count) = (lab.clone(), Arc::clone(&in_flight));
        // Detached: a thread blocked on a client that never reads does
        // not keep Ctrl-C from ending the lab.
        let spawned = std::thread::Builder::new()
            .name("lab-request".into())
            .spawn(move || {
                answer(&lab, request, bound);
                count.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            in_flight.fetch_sub(1, Ordering::SeqCst);
        }
    }
    Ok(())
}

/// Answers one request.
fn answer(lab: &Lab, request: tiny_http::Request, port: u16) {
    let header = |name: &'static str| {
        request
            .headers()
            .iter()
            .find(|h| h.field.equiv(name))
            .map(|h| h.value.as_str().to_string())
    };
    let reply = if let Some(why) = refused(header("Host"), header("Origin"), port) {
        Reply::text(403, why)
    } else if matches!(
        request.method(),
        tiny_http::Method::Get | tiny_http::Method::Head
    ) {
        lab.respond(request.url())
    } else {
        let mut r = Reply::text(405, "the lab answers GET and HEAD only");
        r.headers.push(("Allow".into(), "GET, HEAD".into()));
        r
    };
    answer_with(request, reply);
}

/// Sends `reply` with its length (tiny_http leaves a HEAD's body out, its
/// `Content-Length` kept).
fn answer_with(request: tiny_http::Request, reply: Reply) {
    let body = reply.body.to_vec();
    // Never chunked: every answer says its length, a HEAD's too.
    let mut response = tiny_http::Response::from_data(body)
        .with_status_code(reply.status)
        .with_chunked_threshold(usize::MAX);
    let fixed = [
        ("Content-Type", reply.content_type),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
    ];
    let more = reply.headers.iter().map(|(n, v)| (n.as_str(), v.as_str()));
    for (name, value) in fixed.into_iter().chain(more) {
        // Every name and value is ASCII the lab wrote.
        if let Ok(h) = tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()) {
            response.add_header(h);
        }
    }
    // A client that went away is no reason to stop.
    let _ = request.respond(response);
}

/// Why a request with these `Host` and `Origin` headers is not answered,
/// if it is not: its host must be the lab (`127.0.0.1` or `localhost`, at
/// `port`; a request without a host, as HTTP/1.0 allows, is one no
/// browser sends for another site), and its origin, when it has one, a
/// page of the lab.
pub fn refused(host: Option<String>, origin: Option<String>, port: u16) -> Option<&'static str> {
    let ours = |authority: &str| {
        let authority = authority.to_ascii_lowercase();
        ["127.0.0.1", "localhost"]
            .iter()
            .any(|name| authority == format!("{name}:{port}") || (port == 80 && authority == *name))
    };
    if host.is_some_and(|h| !ours(h.trim())) {
        return Some("the lab answers requests for 127.0.0.1 and localhost only");
    }
    let from_lab = |o: &str| o.strip_prefix("http://").is_some_and(ours);
    if origin.is_some_and(|o| !from_lab(o.trim())) {
        return Some("the lab answers its own pages only");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::refused;

    #[test]
    fn only_the_labs_own_host_and_pages_are_answered() {
        let s = |v: &str| Some(v.to_string());
        assert_eq!(refused(s("127.0.0.1:8080"), None, 8080), None);
        assert_eq!(refused(s("LOCALHOST:8080"), None, 8080), None);
        assert_eq!(refused(None, None, 8080), None);
        assert_eq!(
            refused(s("127.0.0.1:8080"), s("http://localhost:8080"), 8080),
            None
        );
        assert_eq!(refused(s("127.0.0.1"), None, 80), None);
        // DNS rebinding: another site's name pointed at 127.0.0.1.
        assert!(refused(s("evil.example:8080"), None, 8080).is_some());
        assert!(refused(s("127.0.0.1:8081"), None, 8080).is_some());
        assert!(refused(s("127.0.0.1"), None, 8080).is_some());
        // A page elsewhere asking the lab.
        assert!(refused(s("127.0.0.1:8080"), s("http://evil.example"), 8080).is_some());
        assert!(refused(s("127.0.0.1:8080"), s("null"), 8080).is_some());
        assert!(refused(s("127.0.0.1:8080"), s("https://127.0.0.1:8080"), 8080).is_some());
    }
}
