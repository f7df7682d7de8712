//! Store location strings: which back-end a string names, and how to show it without secrets.

use std::path::PathBuf;

use super::StoreError;

/// What a location string names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Location {
    /// An SQLite file. `url` is `Some` for `sqlite:` URLs (which may carry query parameters such
    /// as `mode=ro`), `None` for a plain path.
    SqliteFile { path: PathBuf, url: Option<String> },
    /// A private in-memory SQLite database (`sqlite::memory:`), gone when the store is dropped.
    SqliteMemory { url: String },
    /// A Postgres URL (`postgres://` or `postgresql://`).
    Postgres { url: String },
}

/// Schemes this build recognises as other databases, for a clearer error.
const UNSUPPORTED_DATABASES: &[&str] = &["mysql", "mariadb", "mssql", "sqlserver", "oracle", "redis", "mongodb"];

impl Location {
    pub(crate) fn parse(location: &str) -> Result<Location, StoreError> {
        let unsupported = |reason: String| StoreError::UnsupportedLocation { location: display_location(location), reason };
        if location.trim().is_empty() {
            return Err(unsupported("empty location; give a file path, `sqlite://path`, `sqlite::memory:` or a `postgres://` URL".into()));
        }
        if location == ":memory:" {
            return Ok(Location::SqliteMemory { url: "sqlite::memory:".into() });
        }
        if let Some(rest) = location.strip_prefix("sqlite:") {
            let rest = rest.strip_prefix("//").unwrap_or(rest);
            let (path, params) = match rest.split_once('?') {
                Some((p, q)) => (p, Some(q)),
                None => (rest, None),
            };
            let memory_param = params.map(|q| q.split('&').any(|kv| kv == "mode=memory")).unwrap_or(false);
            if path == ":memory:" || memory_param {
                return Ok(Location::SqliteMemory { url: location.to_string() });
            }
            if path.is_empty() {
                return Err(unsupported("`sqlite:` URL without a file path".into()));
            }
            return Ok(Location::SqliteFile { path: PathBuf::from(path), url: Some(location.to_string()) });
        }
        if location.starts_with("postgres://") || location.starts_with("postgresql://") {
            return Ok(Location::Postgres { url: location.to_string() });
        }
        if let Some((scheme, _)) = location.split_once("://") {
            let scheme_lc = scheme.to_ascii_lowercase();
            let reason = if UNSUPPORTED_DATABASES.contains(&scheme_lc.as_str()) {
                format!("`{scheme}://` is not a supported store (use SQLite or Postgres)")
            } else {
                format!("unknown scheme `{scheme}://` (use a file path, `sqlite://path`, `sqlite::memory:` or `postgres://...`)")
            };
            return Err(unsupported(reason));
        }
        Ok(Location::SqliteFile { path: PathBuf::from(location), url: None })
    }
}

/// The location as it may be shown in messages: the password of a URL is masked.
pub(crate) fn display_location(location: &str) -> String {
    let Some((scheme, rest)) = location.split_once("://") else {
        return location.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => location.to_string(),
        },
        None => location.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_locations() {
        assert_eq!(Location::parse("runs/store.db").unwrap(), Location::SqliteFile { path: "runs/store.db".into(), url: None });
        assert!(matches!(
            Location::parse("sqlite:///tmp/x.db").unwrap(),
            Location::SqliteFile { path, .. } if path == std::path::Path::new("/tmp/x.db")
        ));
        assert!(matches!(
            Location::parse("sqlite://rel/x.db?mode=rwc").unwrap(),
            Location::SqliteFile { path, .. } if path == std::path::Path::new("rel/x.db")
        ));
        assert!(matches!(Location::parse("sqlite::memory:").unwrap(), Location::SqliteMemory { .. }));
        assert!(matches!(Location::parse("postgresql://u@h/db").unwrap(), Location::Postgres { .. }));
        assert!(Location::parse("mysql://u@h/db").is_err());
        assert!(Location::parse("").is_err());
    }

    #[test]
    fn masks_passwords() {
        assert_eq!(display_location("postgres://u:hunter2@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(display_location("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(display_location("/tmp/a.db"), "/tmp/a.db");
    }
}
