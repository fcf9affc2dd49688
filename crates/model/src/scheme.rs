//! The protocols poolbench drives, by their URL schemes: one type that
//! decides, where the scheme's text was matched before. The URL keeps the
//! scheme as written (`postgresql`, `mariadb` …); [`Scheme::of`] reads it.

/// A target's protocol, from its URL scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    Http,
    H2c,
    Https,
    Grpc,
    Grpcs,
    /// `postgres://` or `postgresql://`.
    Postgres,
    /// `mysql://` or `mariadb://`.
    Mysql,
    Redis,
    Rediss,
}

impl Scheme {
    /// Every scheme as written in a URL, with its protocol and the port
    /// it implies.
    pub const WRITTEN: [(&'static str, Scheme, u16); 11] = [
        ("http", Scheme::Http, 80),
        ("h2c", Scheme::H2c, 80),
        ("https", Scheme::Https, 443),
        ("grpc", Scheme::Grpc, 80),
        ("grpcs", Scheme::Grpcs, 443),
        ("postgres", Scheme::Postgres, 5432),
        ("postgresql", Scheme::Postgres, 5432),
        ("mysql", Scheme::Mysql, 3306),
        ("mariadb", Scheme::Mysql, 3306),
        ("redis", Scheme::Redis, 6379),
        ("rediss", Scheme::Redis, 6379),
    ];

    /// The protocol of a scheme as written; `None` for one poolbench does
    /// not drive.
    pub fn of(written: &str) -> Option<Scheme> {
        Scheme::WRITTEN
            .iter()
            .find(|(name, _, _)| *name == written)
            .map(|&(name, scheme, _)| match (name, scheme) {
                ("rediss", _) => Scheme::Rediss,
                _ => scheme,
            })
    }

    /// PostgreSQL or MySQL: a SQL database with parameters and a query.
    pub fn is_sql(self) -> bool {
        matches!(self, Scheme::Postgres | Scheme::Mysql)
    }

    /// A server that says its own connection limit (a survey reads it).
    pub fn has_survey(self) -> bool {
        matches!(
            self,
            Scheme::Postgres | Scheme::Mysql | Scheme::Redis | Scheme::Rediss
        )
    }

    /// gRPC, in clear or over TLS.
    pub fn is_grpc(self) -> bool {
        matches!(self, Scheme::Grpc | Scheme::Grpcs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_written_scheme_reads_as_its_protocol() {
        assert_eq!(Scheme::of("postgresql"), Some(Scheme::Postgres));
        assert_eq!(Scheme::of("mariadb"), Some(Scheme::Mysql));
        assert_eq!(Scheme::of("rediss"), Some(Scheme::Rediss));
        assert_eq!(Scheme::of("redis"), Some(Scheme::Redis));
        assert_eq!(Scheme::of("ftp"), None);
        for (name, _, _) in Scheme::WRITTEN {
            assert!(Scheme::of(name).is_some(), "{name}");
        }
    }
}
