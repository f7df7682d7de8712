//! Command arguments: one JSON object, read by name with errors that say which argument of which
//! command was missing or of the wrong type.

use serde_json::{Map, Value};

use super::CommandError;

pub struct Args {
    command: String,
    map: Map<String, Value>,
}

impl Args {
    pub fn new(command: &str, args: Value) -> Result<Args, CommandError> {
        let map = match args {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => return Err(CommandError::BadArguments(format!("{command}: arguments must be a JSON object, got {other}"))),
        };
        Ok(Args { command: command.to_string(), map })
    }

    fn bad(&self, name: &str, want: &str, got: &Value) -> CommandError {
        CommandError::BadArguments(format!("{}: argument `{name}` must be {want}, got {got}", self.command))
    }

    fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    pub fn value(&self, name: &str) -> Result<&Value, CommandError> {
        self.get(name).ok_or_else(|| CommandError::BadArguments(format!("{}: missing argument `{name}`", self.command)))
    }

    pub fn opt_str(&self, name: &str) -> Result<Option<&str>, CommandError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.bad(name, "a string", v)),
        }
    }

    pub fn str(&self, name: &str) -> Result<&str, CommandError> {
        self.opt_str(name)?.ok_or_else(|| CommandError::BadArguments(format!("{}: missing argument `{name}`", self.command)))
    }

    pub fn opt_i64(&self, name: &str) -> Result<Option<i64>, CommandError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(n)) if n.as_i64().is_some() => Ok(n.as_i64()),
            // Query strings and form fields arrive as text.
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(v @ Value::String(s)) => s.trim().parse().map(Some).map_err(|_| self.bad(name, "an integer", v)),
            Some(v) => Err(self.bad(name, "an integer", v)),
        }
    }

    pub fn i64(&self, name: &str) -> Result<i64, CommandError> {
        self.opt_i64(name)?.ok_or_else(|| CommandError::BadArguments(format!("{}: missing argument `{name}`", self.command)))
    }

    pub fn opt_f64(&self, name: &str) -> Result<Option<f64>, CommandError> {
        let n = match self.get(name) {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Number(n)) => n.as_f64(),
            // Query strings and form fields arrive as text.
            Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
            Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
            Some(_) => None,
        };
        match n {
            Some(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(self.bad(name, "a number", self.get(name).unwrap_or(&Value::Null))),
        }
    }

    pub fn opt_bool(&self, name: &str) -> Result<Option<bool>, CommandError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) if s == "true" => Ok(Some(true)),
            Some(Value::String(s)) if s == "false" => Ok(Some(false)),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(v) => Err(self.bad(name, "true or false", v)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_are_read_by_name_and_type() {
        let a = Args::new("episodes", json!({"run_id": 3, "limit": "20", "success": "true", "arm": ""})).unwrap();
        assert_eq!(a.i64("run_id").unwrap(), 3);
        assert_eq!(a.opt_i64("limit").unwrap(), Some(20));
        assert_eq!(a.opt_bool("success").unwrap(), Some(true));
        assert_eq!(a.opt_str("arm").unwrap(), None);
        let e = a.str("suite").unwrap_err().to_string();
        assert_eq!(e, "episodes: missing argument `suite`");
        let b = Args::new("episode", json!({"id": "x"})).unwrap();
        assert_eq!(b.i64("id").unwrap_err().to_string(), "episode: argument `id` must be an integer, got \"x\"");
        assert!(Args::new("x", json!([1])).is_err());
    }
}
