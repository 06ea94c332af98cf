//! The lab's HTTP server: bound to 127.0.0.1 (never another address), one
//! request at a time, GET and HEAD only, stopped cleanly by Ctrl-C.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::Lab;

/// Serves `lab` on 127.0.0.1:`port` (0: a free port) until Ctrl-C;
/// `ready` is called with the URL once the port is bound. Returns why it
/// could not start.
pub fn serve(lab: &Lab, port: u16, ready: impl FnOnce(&str)) -> Result<(), String> {
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
    for request in server.incoming_requests() {
        if stopped.load(Ordering::SeqCst) {
            break;
        }
        let head = *request.method() == tiny_http::Method::Head;
        let reply = if head || *request.method() == tiny_http::Method::Get {
            lab.respond(request.url())
        } else {
            let mut r = super::Reply::text(405, "the lab answers GET and HEAD only");
            r.headers.push(("Allow".into(), "GET, HEAD".into()));
            r
        };
        let body: Vec<u8> = if head {
            Vec::new()
        } else {
            reply.body.to_vec()
        };
        let mut response = tiny_http::Response::from_data(body).with_status_code(reply.status);
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
    Ok(())
}
