//! The fault matrix of `faults.rs` against a server nobody here wrote:
//! nginx (OS package) behind a toxiproxy proxy of its own, over HTTP/1.1.
//! Every fault ends on time with a whole result, its errors counted by
//! their real kind and named in their window, as against the built-in
//! server.
use crate::faults::{behind_proxy, half_open_then_reset, the_rest_of_the_matrix};

#[test]
fn nginx_half_open_and_reset_are_timeouts_and_resets_then_recovered() {
    let (url, _) = crate::services::nginx_urls();
    let (proxy, url) = behind_proxy(&url, "nginx");
    half_open_then_reset(&url, &proxy);
}

#[test]
fn nginx_meets_the_rest_of_the_matrix() {
    let (url, _) = crate::services::nginx_urls();
    let (proxy, url) = behind_proxy(&url, "nginx-matrix");
    the_rest_of_the_matrix(&url, &proxy);
}
