//! One MySQL session, and the statement prepared on it.
use mysql_async::{Conn, Statement};

/// One MySQL session, with the target's statement once it is prepared on
/// it (executed by its handle: no lookup in the client's statement cache
/// per request).
pub struct MysqlConn(pub(super) Conn, pub(super) Option<Statement>);

impl MysqlConn {
    pub(crate) fn new(conn: Conn) -> MysqlConn {
        MysqlConn(conn, None)
    }

    /// The `mysql_async` connection, for callers that run more than the
    /// target's query.
    pub fn conn(&mut self) -> &mut Conn {
        &mut self.0
    }
}
