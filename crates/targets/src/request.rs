//! The HTTP request each worker sends: method, path, headers and body,
//! encoded once per target when nothing in them varies, or rendered per
//! request from a template when the path, a header or the body holds
//! `{seq}` (a number counting up from 0, the same within one request) or
//! `{random:A..B}` (a uniform integer from A to B inclusive, drawn afresh
//! at each place), so a cache cannot flatter the pool.
pub(crate) use crate::template::Template;
use crate::TargetError;
use poolbench_model::HttpRequestOptions;
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// The request, checked and split into templates.
#[derive(Clone, Debug)]
pub(crate) struct HttpRequest {
    pub(crate) method: String,
    pub(crate) path: Template,
    /// Sent as Host (HTTP/1.1) or :authority (HTTP/2).
    pub(crate) authority: String,
    /// Names lower-cased (as HTTP/2 requires), in the order given.
    pub(crate) headers: Vec<(String, Template)>,
    pub(crate) body: Option<Template>,
    /// Counts requests, for `{seq}`.
    seq: Arc<AtomicU64>,
}

impl HttpRequest {
    /// The request `options.http` describes to the target `spec` (its
    /// path, at its authority); a body file is read here.
    pub(crate) fn for_target(
        spec: &crate::TargetSpec,
        options: &crate::TargetOptions,
    ) -> Result<HttpRequest, TargetError> {
        HttpRequest::new(&options.http, &spec.authority, &spec.path)
    }

    /// The request `options` describe, to `path` at `authority` (from the
    /// URL); a body file is read here.
    pub(crate) fn new(
        options: &HttpRequestOptions,
        authority: &str,
        path: &str,
    ) -> Result<HttpRequest, TargetError> {
        let setup = TargetError::Setup;
        let method = options.method.clone().unwrap_or_else(|| "GET".into());
        if method.is_empty() || !method.bytes().all(is_token) {
            return Err(setup(format!(
                "invalid --method \"{method}\": not an HTTP token"
            )));
        }
        let mut authority = options
            .host
            .clone()
            .unwrap_or_else(|| authority.to_string());
        let mut headers = Vec::new();
        let given = options.headers.iter().map(|h| (h.as_str(), true));
        let content_type = options.content_type.iter().map(|c| (c.as_str(), false));
        for (line, from_header) in given.chain(content_type) {
            let (name, value) = if from_header {
                split_header(line)?
            } else {
                ("content-type".to_string(), line.trim().to_string())
            };
            if value.contains(['\r', '\n']) {
                return Err(setup(format!(
                    "header \"{name}\": a value cannot hold a line break"
                )));
            }
            match name.as_str() {
                "host" => authority = value,
                "content-length" | "transfer-encoding" => {
                    return Err(setup(format!(
                        "header \"{name}\" is set by poolbench from the body; leave it out"
                    )))
                }
                "connection" | "keep-alive" | "upgrade" | "te" | "proxy-connection" => {
                    return Err(setup(format!(
                        "header \"{name}\" is about the connection, which the strategy decides; leave it out"
                    )))
                }
                _ => headers.push((name, Template::parse(value.as_bytes()).map_err(setup)?)),
            }
        }
        let body =
            match (&options.body, &options.body_file) {
                (Some(_), Some(_)) => {
                    return Err(setup("--body and --body-file: give one".into()));
                }
                (Some(b), None) => Some(b.as_bytes().to_vec()),
                (None, Some(file)) => Some(std::fs::read(file).map_err(|e| {
                    setup(format!("cannot read --body-file {}: {e}", file.display()))
                })?),
                (None, None) => None,
            };
        let body = body
            .map(|b| Template::parse(&b))
            .transpose()
            .map_err(setup)?;
        Ok(HttpRequest {
            method,
            path: Template::parse(path.as_bytes()).map_err(setup)?,
            authority,
            headers,
            body,
            seq: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Path, headers and body are the same for every request.
    pub(crate) fn is_fixed(&self) -> bool {
        self.path.is_fixed()
            && self.headers.iter().all(|(_, v)| v.is_fixed())
            && self.body.as_ref().is_none_or(Template::is_fixed)
    }

    /// The next request's number, for `{seq}`.
    pub(crate) fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Relaxed)
    }

    /// A HEAD request's answer has no body, whatever its headers say.
    pub(crate) fn bodiless_answer(&self) -> bool {
        self.method == "HEAD"
    }

    /// The HTTP/1.1 request up to the blank line, without Content-Length,
    /// as a template.
    fn h1_head(&self) -> Template {
        let mut t = Template::default();
        t.text(format!("{} ", self.method).as_bytes());
        t.append(&self.path);
        t.text(format!(" HTTP/1.1\r\nhost: {}\r\n", self.authority).as_bytes());
        for (name, value) in &self.headers {
            t.text(format!("{name}: ").as_bytes());
            t.append(value);
            t.text(b"\r\n");
        }
        t
    }
}

/// HTTP/1.1 requests from an [`HttpRequest`]: the same bytes each time when
/// it is fixed, rendered per request otherwise.
#[derive(Clone, Debug)]
pub(crate) struct H1Request {
    fixed: Option<bytes::Bytes>,
    head: Template,
    body: Option<Template>,
    request: Arc<HttpRequest>,
}

impl H1Request {
    pub(crate) fn new(request: &HttpRequest) -> H1Request {
        let mut r = H1Request {
            fixed: None,
            head: request.h1_head(),
            body: request.body.clone(),
            request: Arc::new(request.clone()),
        };
        if request.is_fixed() {
            r.fixed = Some(bytes::Bytes::from(r.render(0)));
        }
        r
    }

    /// The bytes of one request.
    fn render(&self, seq: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        self.head.render(seq, &mut out);
        match &self.body {
            Some(body) => {
                let body = body.rendered(seq);
                out.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
                out.extend_from_slice(&body);
            }
            None => out.extend_from_slice(b"\r\n"),
        }
        out
    }

    /// The next request: the fixed bytes, borrowed (nothing done per
    /// request), or fresh ones.
    pub(crate) fn next(&self) -> Cow<'_, [u8]> {
        match &self.fixed {
            Some(b) => Cow::Borrowed(b),
            None => Cow::Owned(self.render(self.request.next_seq())),
        }
    }

    /// The next request as bytes of its own (a pipelined connection's
    /// writer holds them until they go out): the fixed ones shared.
    pub(crate) fn next_bytes(&self) -> bytes::Bytes {
        match &self.fixed {
            Some(b) => b.clone(),
            None => bytes::Bytes::from(self.render(self.request.next_seq())),
        }
    }

    pub(crate) fn bodiless_answer(&self) -> bool {
        self.request.bodiless_answer()
    }
}

/// A header block and, if any, a body.
pub(crate) type H2Parts = (Arc<[u8]>, Option<Arc<[u8]>>);

/// HTTP/2 requests from an [`HttpRequest`]: one header block (with
/// content-length when there is a body) and body when fixed, rendered per
/// request otherwise.
#[derive(Clone, Debug)]
pub(crate) struct H2Request {
    fixed: Option<H2Parts>,
    https: bool,
    request: Arc<HttpRequest>,
}

impl H2Request {
    pub(crate) fn new(request: &HttpRequest, https: bool) -> H2Request {
        let mut r = H2Request {
            fixed: None,
            https,
            request: Arc::new(request.clone()),
        };
        if request.is_fixed() {
            let (block, body) = r.render(0);
            r.fixed = Some((block.into(), body));
        }
        r
    }

    fn render(&self, seq: u64) -> (Vec<u8>, Option<Arc<[u8]>>) {
        let r = &self.request;
        let body = r.body.as_ref().map(|b| b.rendered(seq));
        let mut headers: Vec<(&str, Vec<u8>)> = r
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.rendered(seq)))
            .collect();
        if let Some(b) = &body {
            headers.push(("content-length", b.len().to_string().into_bytes()));
        }
        let block = crate::http2::frame::header_block(
            self.https,
            &r.method,
            &r.authority,
            &r.path.rendered(seq),
            &headers,
        );
        (block, body.map(Into::into))
    }

    /// The next request's header block (borrowed when fixed) and body.
    pub(crate) fn next(&self) -> (Cow<'_, [u8]>, Option<Arc<[u8]>>) {
        match &self.fixed {
            Some((block, body)) => (Cow::Borrowed(block), body.clone()),
            None => {
                let (block, body) = self.render(self.request.next_seq());
                (Cow::Owned(block), body)
            }
        }
    }
}

/// `Name: value` from `-H`: the name a token, lower-cased.
pub(crate) fn split_header(line: &str) -> Result<(String, String), TargetError> {
    let bad = |why: &str| TargetError::Setup(format!("invalid header \"{line}\": {why}"));
    let (name, value) = line
        .split_once(':')
        .ok_or_else(|| bad("expected \"Name: value\""))?;
    let name = name.trim();
    if name.is_empty() || !name.bytes().all(is_token) {
        return Err(bad("the name is not an HTTP token"));
    }
    Ok((name.to_ascii_lowercase(), value.trim().to_string()))
}

/// RFC 9110 tchar.
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Edit = fn(&mut HttpRequestOptions);

    fn options() -> HttpRequestOptions {
        HttpRequestOptions::default()
    }

    #[test]
    fn a_fixed_request_is_encoded_once_with_its_length() {
        let mut o = options();
        o.method = Some("POST".into());
        o.headers = vec!["Authorization: Bearer abc".into(), "X-Trace:1".into()];
        o.content_type = Some("application/json".into());
        o.body = Some("{\"id\": 7}".into());
        let r = HttpRequest::new(&o, "127.0.0.1:80", "/api").unwrap();
        let h1 = H1Request::new(&r);
        assert!(h1.fixed.is_some());
        assert_eq!(
            &*h1.next(),
            &b"POST /api HTTP/1.1\r\nhost: 127.0.0.1:80\r\nauthorization: Bearer abc\r\n\
                  x-trace: 1\r\ncontent-type: application/json\r\ncontent-length: 9\r\n\r\n{\"id\": 7}"[..]
        );
    }

    #[test]
    fn a_templated_request_counts_and_measures_each_body() {
        let mut o = options();
        o.host = Some("api.example".into());
        o.body = Some("{seq}".into());
        let r = HttpRequest::new(&o, "127.0.0.1:80", "/{seq}").unwrap();
        let h1 = H1Request::new(&r);
        let first = h1.next();
        for _ in 0..9 {
            h1.next();
        }
        let tenth = h1.next();
        assert!(first.starts_with(b"GET /0 HTTP/1.1\r\nhost: api.example\r\n"));
        assert!(first.ends_with(b"content-length: 1\r\n\r\n0"));
        assert!(tenth.ends_with(b"content-length: 2\r\n\r\n10"));
    }

    #[test]
    fn bad_requests_are_refused_with_what_was_wrong() {
        let cases: Vec<(Edit, &str)> = vec![
            (
                |o| o.headers = vec!["NoColon".into()],
                "expected \"Name: value\"",
            ),
            (
                |o| o.headers = vec!["Bad Name: x".into()],
                "not an HTTP token",
            ),
            (
                |o| o.headers = vec!["Content-Length: 3".into()],
                "set by poolbench",
            ),
            (
                |o| o.headers = vec!["Connection: close".into()],
                "about the connection",
            ),
            (|o| o.method = Some("GE T".into()), "--method"),
            (
                |o| o.body_file = Some("/nonexistent/body.json".into()),
                "cannot read --body-file",
            ),
            (
                |o| {
                    o.body = Some("a".into());
                    o.body_file = Some("b".into());
                },
                "give one",
            ),
            (|o| o.body = Some("{random:3..1}".into()), "{random:3..1}"),
        ];
        for (set, want) in cases {
            let mut o = options();
            set(&mut o);
            let e = HttpRequest::new(&o, "h:1", "/").unwrap_err().to_string();
            assert!(e.contains(want), "{e} (wanted {want})");
        }
        let mut o = options();
        o.headers = vec!["Host: other:8080".into()];
        assert_eq!(
            HttpRequest::new(&o, "h:1", "/").unwrap().authority,
            "other:8080"
        );
    }
}
