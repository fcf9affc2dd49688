//! TLS session resumption on MySQL sessions. `mysql_async` builds its own
//! rustls client, one per set of options, whose session store resumes
//! sessions by default (TLS 1.3 tickets, TLS 1.2 session IDs and tickets):
//! the run's sessions share it. Resumption off gives each session a client
//! of its own, so none is resumed. The library does not expose its
//! handshakes, so they are not counted (the server's `Ssl_sessions_reused`
//! reads 0 for resumed TLS 1.3 sessions on MariaDB 10.11, so it cannot
//! stand in).
use mysql_async::{Opts, OptsBuilder};

/// The options one new session connects with: the run's own (one client,
/// one session store) when `resume`, else a copy with a client of its own.
pub(crate) fn session_options(opts: &Opts, resume: bool) -> Opts {
    match resume {
        true => opts.clone(),
        false => OptsBuilder::from_opts(opts.clone())
            .ssl_opts(opts.ssl_opts().cloned())
            .into(),
    }
}
