//! The `--control` commands: one JSON object per line,
//! `{"id": ..., "cmd": ..., ...}`, answered with one JSON object,
//! `{"id": ..., "ok": true, ...}` or `{"id": ..., "error": "..."}`.
//!
//! Commands (the Rust API's verbs): `fault` (`spec`: a `--fault` spec;
//! answers `control` for a request fault), `remove` (`control`), `clear`,
//! `move-leader` (`topic`, `partition`, optional `to`), `shuffle-leaders`
//! (`seed`), `move-coordinator` (optional `key`, optional `to`; without a
//! key every coordinator moves), `stop-broker`, `start-broker`,
//! `restart-broker`, `remove-broker` (`broker`), `add-broker` (answers
//! `broker`, `address`), `rtt` (`broker`, `ms`), `cap-version` (`api` in
//! kebab-case, optional `max`), `record` (`capacity`), `recorded`,
//! `leader` (`topic`, `partition`), `seed` (`seed`), `counts`.

use serde_json::{json, Map, Value};

use super::spec::{api_named, FaultSpec};
use super::ControlId;
use crate::cluster::FakeCluster;

fn field<'a>(command: &'a Value, name: &str) -> Result<&'a Value, String> {
    command
        .get(name)
        .ok_or_else(|| format!("`{name}` is missing"))
}

fn int(command: &Value, name: &str) -> Result<i64, String> {
    field(command, name)?
        .as_i64()
        .ok_or_else(|| format!("`{name}` is not an integer"))
}

fn i32_of(command: &Value, name: &str) -> Result<i32, String> {
    i32::try_from(int(command, name)?).map_err(|_| format!("`{name}` is out of range"))
}

fn opt_i32(command: &Value, name: &str) -> Result<Option<i32>, String> {
    match command.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => i32_of(command, name).map(Some),
    }
}

fn text<'a>(command: &'a Value, name: &str) -> Result<&'a str, String> {
    field(command, name)?
        .as_str()
        .ok_or_else(|| format!("`{name}` is not a string"))
}

impl FakeCluster {
    /// Runs one `--control` line and returns its answer line (without a
    /// newline).
    pub async fn control_line(&self, line: &str) -> String {
        let command: Value = match serde_json::from_str(line) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return json!({"id": null, "error": "a command is a JSON object"}).to_string(),
            Err(e) => return json!({"id": null, "error": format!("not JSON: {e}")}).to_string(),
        };
        let id = command.get("id").cloned().unwrap_or(Value::Null);
        let mut answer = match self.control_command(&command).await {
            Ok(Value::Object(map)) => map,
            Ok(_) => Map::new(),
            Err(error) => {
                return json!({"id": id, "error": error}).to_string();
            }
        };
        answer.insert("id".into(), id);
        answer.insert("ok".into(), Value::Bool(true));
        Value::Object(answer).to_string()
    }

    /// Runs one command object; the fields of its answer, or why not.
    pub async fn control_command(&self, command: &Value) -> Result<Value, String> {
        let cmd = text(command, "cmd")?;
        let e = |e: super::ControlError| e.to_string();
        Ok(match cmd {
            "fault" => {
                let spec = FaultSpec::parse(text(command, "spec")?).map_err(|e| e.to_string())?;
                match self.apply_fault(&spec).map_err(e)? {
                    Some(ControlId(n)) => json!({"control": n}),
                    None => json!({}),
                }
            }
            "remove" => {
                let n = u64::try_from(int(command, "control")?).map_err(|_| "bad control id")?;
                json!({"removed": self.remove_intercept(ControlId(n))})
            }
            "clear" => {
                self.clear_intercepts();
                json!({})
            }
            "move-leader" => {
                let (leader, epoch) = self
                    .move_leader(
                        text(command, "topic")?,
                        i32_of(command, "partition")?,
                        opt_i32(command, "to")?,
                    )
                    .map_err(e)?;
                json!({"leader": leader, "leader_epoch": epoch})
            }
            "shuffle-leaders" => {
                let seed = u64::try_from(int(command, "seed")?).map_err(|_| "bad seed")?;
                json!({"moved": self.shuffle_leaders(seed)})
            }
            "move-coordinator" => match command.get("key").and_then(Value::as_str) {
                Some(key) => {
                    json!({"coordinator": self.move_coordinator(key, opt_i32(command, "to")?).map_err(e)?})
                }
                None => {
                    self.move_coordinators();
                    json!({})
                }
            },
            "stop-broker" => {
                self.stop_broker(i32_of(command, "broker")?)
                    .await
                    .map_err(e)?;
                json!({})
            }
            "start-broker" => {
                let address = self
                    .start_broker(i32_of(command, "broker")?)
                    .await
                    .map_err(e)?;
                json!({"address": address.to_string()})
            }
            "restart-broker" => {
                self.restart_broker(i32_of(command, "broker")?)
                    .await
                    .map_err(e)?;
                json!({})
            }
            "remove-broker" => {
                self.remove_broker(i32_of(command, "broker")?)
                    .await
                    .map_err(e)?;
                json!({})
            }
            "add-broker" => {
                let node = self.add_broker().await.map_err(e)?;
                json!({"broker": node, "address": self.broker_address(node)})
            }
            "rtt" => {
                let ms = u64::try_from(int(command, "ms")?).map_err(|_| "bad ms")?;
                self.set_rtt(
                    i32_of(command, "broker")?,
                    std::time::Duration::from_millis(ms),
                );
                json!({})
            }
            "cap-version" => {
                let name = text(command, "api")?;
                let api = api_named(name).ok_or_else(|| format!("`{name}` is not an API name"))?;
                let max = opt_i32(command, "max")?
                    .map(|v| i16::try_from(v).map_err(|_| "bad max"))
                    .transpose()?;
                self.cap_version(api, max);
                json!({})
            }
            "record" => {
                let capacity =
                    usize::try_from(int(command, "capacity")?).map_err(|_| "bad capacity")?;
                self.record_requests(capacity);
                json!({})
            }
            "recorded" => {
                let requests: Vec<Value> = self
                    .recorded()
                    .iter()
                    .map(|r| {
                        json!({"api": r.api.name(), "version": r.version, "broker": r.broker, "connection": r.connection})
                    })
                    .collect();
                json!({"requests": requests})
            }
            "leader" => {
                let (leader, epoch) = self
                    .leader(text(command, "topic")?, i32_of(command, "partition")?)
                    .ok_or("no such partition")?;
                json!({"leader": leader, "leader_epoch": epoch})
            }
            "seed" => {
                self.seed(u64::try_from(int(command, "seed")?).map_err(|_| "bad seed")?);
                json!({})
            }
            "counts" => {
                let counts = self.fault_counts();
                let mut map: Map<String, Value> = counts
                    .kinds
                    .iter()
                    .map(|(k, n)| (k.name().to_owned(), json!(n)))
                    .collect();
                map.insert(
                    super::DROPPED_ANSWER_RECORDS.to_owned(),
                    json!(counts.dropped_answer_records),
                );
                json!({"faults": map})
            }
            other => return Err(format!("unknown command `{other}`")),
        })
    }
}
