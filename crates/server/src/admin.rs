//! The `/_poolbench/*` endpoints: stats as JSON and their reset.

use bytes::Bytes;
use http::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;

use crate::authors::Authors;
use crate::counters::Counters;
use crate::response::{Resp, TEXT_PLAIN};

/// Requests under this prefix are answered by the server itself, never counted.
pub(crate) const ADMIN_PREFIX: &str = "/_poolbench/";
const APPLICATION_JSON: HeaderValue = HeaderValue::from_static("application/json");

/// `GET /_poolbench/stats`, `POST /_poolbench/stats/reset`; 405 or 404 otherwise.
pub(crate) fn admin(req: &Request<Incoming>, stats: &Counters, authors: Option<&Authors>) -> Resp {
    let json = |body: Vec<u8>| {
        let mut resp = Response::new(Full::new(Bytes::from(body)));
        resp.headers_mut().insert(CONTENT_TYPE, APPLICATION_JSON);
        resp
    };
    let status = |code: StatusCode, allow: Option<&'static str>| {
        let reason = code.canonical_reason().unwrap_or("error");
        let mut resp = Response::new(Full::new(Bytes::from(format!("{reason}\n"))));
        *resp.status_mut() = code;
        resp.headers_mut().insert(CONTENT_TYPE, TEXT_PLAIN);
        if let Some(allow) = allow {
            resp.headers_mut()
                .insert(ALLOW, HeaderValue::from_static(allow));
        }
        resp
    };
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/_poolbench/stats") => {
            let mut snapshot = stats.snapshot();
            snapshot.db_pool = authors.map(Authors::stats);
            json(serde_json::to_vec(&snapshot).unwrap_or_default())
        }
        (&Method::POST, "/_poolbench/stats/reset") => {
            stats.reset();
            if let Some(a) = authors {
                a.reset();
            }
            json(br#"{"reset":true}"#.to_vec())
        }
        (_, "/_poolbench/stats") => status(StatusCode::METHOD_NOT_ALLOWED, Some("GET")),
        (_, "/_poolbench/stats/reset") => status(StatusCode::METHOD_NOT_ALLOWED, Some("POST")),
        _ => status(StatusCode::NOT_FOUND, None),
    }
}
