//! The response of plain HTTP requests, and its content type.
use bytes::Bytes;
use http::header::HeaderValue;
use http::Response;
use http_body_util::Full;

pub(crate) const TEXT_PLAIN: HeaderValue = HeaderValue::from_static("text/plain");

/// The response type of plain HTTP requests.
pub(crate) type Resp = Response<Full<Bytes>>;
