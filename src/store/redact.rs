//! Keeping secrets out of the store: run configs are stored as given, minus anything that looks
//! like a credential.

use serde_json::Value;

/// What a redacted value is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Whether an object key names a secret: `api_key`, `apiKey`, `OPENAI_API_KEY`, `token`,
/// `auth_token`, `access-token`, `password`, `db_passwd`, `secret`, `client_secret`,
/// `authorization`, `private_key`, `credentials`, ... . Token *counts* (`prompt_tokens`,
/// `max_tokens`) and `tokenizer` are not secrets.
pub fn is_secret_key(key: &str) -> bool {
    let normalized: String = key.chars().map(|c| if c == '-' || c == ' ' || c == '.' { '_' } else { c.to_ascii_lowercase() }).collect();
    const CONTAINS: &[&str] = &["api_key", "apikey", "password", "passwd", "secret", "private_key", "credential", "authorization"];
    if CONTAINS.iter().any(|needle| normalized.contains(needle)) {
        return true;
    }
    // `token` as a whole word: `token`, `hf_token`, `token_value`, `accessToken` -> `accesstoken`.
    normalized.split('_').any(|word| word.ends_with("token")) || normalized == "bearer"
}

/// Blank every value whose key names a secret (see [`is_secret_key`]), at any depth of objects
/// and arrays. Null values stay null (there is nothing to hide); any other value, including an
/// object or array, becomes the string [`REDACTED`].
pub fn redact_secrets(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if is_secret_key(key) {
                    if !v.is_null() {
                        *v = Value::String(REDACTED.to_string());
                    }
                } else {
                    redact_secrets(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_secrets),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_keys() {
        for k in [
            "api_key",
            "apiKey",
            "OPENAI_API_KEY",
            "token",
            "hf_token",
            "access-token",
            "accessToken",
            "password",
            "db_passwd",
            "secret",
            "client_secret",
            "Authorization",
            "private_key",
        ] {
            assert!(is_secret_key(k), "{k}");
        }
        for k in ["prompt_tokens", "max_tokens", "tokenizer", "model", "name", "completion_tokens", "n_tokens"] {
            assert!(!is_secret_key(k), "{k}");
        }
    }
}
