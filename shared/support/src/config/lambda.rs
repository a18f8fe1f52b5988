//! What a function needs in Lambda, where nothing falls back to an in-process backend: the
//! variables naming its backends, checked when it starts.

use super::{Config, ConfigError, StoreKind, error};

/// What every function needs in Lambda, where nothing falls back to an in-process backend.
pub const LAMBDA_REQUIRED: [&str; 12] = [
    "TABLE_NAME",
    "DELIVERY_QUEUE_URL",
    "DELIVERY_DLQ_URL",
    "SCHEDULER_GROUP",
    "SCHEDULER_TARGET_ARN",
    "SCHEDULER_ROLE_ARN",
    "SCHEDULER_DLQ_ARN",
    "TIMER_QUEUE_URL",
    "RECORDINGS_BUCKET",
    "RECORDING_DOWNLOAD_ROLE_ARN",
    "SECRETS_KEY_ID",
    "CLIPS_QUEUE_URL",
];

impl Config {
    /// The value of a variable that [`LAMBDA_REQUIRED`] names.
    pub fn required(&self, variable: &'static str) -> Result<&str, ConfigError> {
        let value = match variable {
            "TABLE_NAME" => &self.table_name,
            "DELIVERY_QUEUE_URL" => &self.delivery_queue_url,
            "DELIVERY_DLQ_URL" => &self.delivery_dlq_url,
            "SCHEDULER_GROUP" => &self.scheduler_group,
            "SCHEDULER_TARGET_ARN" => &self.scheduler_target_arn,
            "SCHEDULER_ROLE_ARN" => &self.scheduler_role_arn,
            "SCHEDULER_DLQ_ARN" => &self.scheduler_dlq_arn,
            "TIMER_QUEUE_URL" => &self.timer_queue_url,
            "RECORDINGS_BUCKET" => &self.recordings.bucket,
            "RECORDING_DOWNLOAD_ROLE_ARN" => &self.recordings.download_role,
            "SECRETS_KEY_ID" => &self.secrets_key_id,
            "CLIPS_QUEUE_URL" => &self.clips_queue_url,
            _ => &None,
        };
        value.as_deref().ok_or_else(|| {
            error(
                variable,
                if variable == "RECORDING_DOWNLOAD_ROLE_ARN" {
                    // docs/recordings.md, "Downloads".
                    "required in Lambda: download URLs are signed with this role's sessions, \
                     as the function's own credentials carry no expiry to bound a URL by"
                } else {
                    "required in Lambda"
                },
            )
        })
    }

    /// Fails on the first variable of [`LAMBDA_REQUIRED`] that is unset, or on `STORE=embedded`.
    pub fn check_for_lambda(&self) -> Result<(), ConfigError> {
        if self.store == StoreKind::Embedded {
            return Err(error(
                "STORE",
                "`embedded` keeps state in one instance; Lambda runs on `dynamodb`",
            ));
        }
        for variable in LAMBDA_REQUIRED {
            self.required(variable)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::config;
    use super::*;

    #[test]
    fn lambda_needs_every_backend_named() {
        // A role's variable is checked as an ARN.
        let value = |variable: &str| match variable.ends_with("_ROLE_ARN") {
            true => "arn:aws:iam::123456789012:role/x",
            false => "x",
        };
        let mut vars: Vec<(&str, &str)> = LAMBDA_REQUIRED.iter().map(|v| (*v, value(v))).collect();
        vars.push(("STORE", "dynamodb"));
        assert_eq!(config(&vars).unwrap().check_for_lambda(), Ok(()));
        for missing in LAMBDA_REQUIRED.iter().skip(1) {
            let partial: Vec<(&str, &str)> =
                vars.iter().copied().filter(|(k, _)| k != missing).collect();
            let err = config(&partial).unwrap().check_for_lambda().unwrap_err();
            assert_eq!(err.variable, *missing);
        }
        assert_eq!(
            config(&[])
                .unwrap()
                .check_for_lambda()
                .unwrap_err()
                .variable,
            "STORE"
        );
    }
}
