//! What machine a run is on, so numbers from different machines are never confused.

use serde::{Deserialize, Serialize};

use super::native_versions::{self, NativeVersions};

/// The machine facts a report carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Cores this process may run on ([`phasers::available_cores`]); tables' "oversubscribed".
    pub available_cores: usize,
    /// The CPU model from `/proc/cpuinfo`, when there is one.
    pub cpu_model: Option<String>,
    /// `std::env::consts::OS`.
    pub os: String,
    /// `std::env::consts::ARCH`.
    pub arch: String,
    /// `PHASERS_WAIT`, when set: it changes every library barrier's wait policy.
    pub phasers_wait: Option<String>,
    /// `PHASERS_SPIN`, when set: it changes every library barrier's spin budget.
    pub phasers_spin: Option<String>,
    /// `PHASERS_WAKE`, when set: how every release wakes sleepers (absent in old files).
    #[serde(default)]
    pub phasers_wake: Option<String>,
    /// The compilers and runtime libraries of the C/C++/OpenMP baselines.
    pub native: Option<NativeVersions>,
    /// Which tuning profile `Algorithm::Auto` used, in words (`phasers list` prints the same).
    pub profile: Option<String>,
}

impl Machine {
    /// The facts about the machine this process runs on.
    pub fn detect() -> Self {
        Machine {
            available_cores: phasers::available_cores(),
            cpu_model: std::fs::read_to_string("/proc/cpuinfo")
                .ok()
                .and_then(|text| cpu_model(&text)),
            os: std::env::consts::OS.to_owned(),
            arch: std::env::consts::ARCH.to_owned(),
            phasers_wait: env_var("PHASERS_WAIT"),
            phasers_spin: env_var("PHASERS_SPIN"),
            phasers_wake: env_var("PHASERS_WAKE"),
            native: Some(native_versions::versions()),
            profile: Some(phasers::Profile::status().to_string()),
        }
    }

    /// One line for the top of the report.
    pub fn summary(&self) -> String {
        let mut line = format!(
            "{} core{} available, {}, {}/{}",
            self.available_cores,
            if self.available_cores == 1 { "" } else { "s" },
            self.cpu_model.as_deref().unwrap_or("unknown CPU"),
            self.os,
            self.arch
        );
        for (name, value) in [
            ("PHASERS_WAIT", &self.phasers_wait),
            ("PHASERS_SPIN", &self.phasers_spin),
            ("PHASERS_WAKE", &self.phasers_wake),
        ] {
            if let Some(value) = value {
                line.push_str(&format!(", {name}={value}"));
            }
        }
        line
    }
}

fn env_var(name: &str) -> Option<String> {
    std::env::var_os(name).map(|value| value.to_string_lossy().into_owned())
}

/// The CPU model in the text of `/proc/cpuinfo` (x86's `model name`, or another arch's key).
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    const KEYS: [&str; 4] = ["model name", "cpu model", "Model", "Hardware"];
    KEYS.iter().find_map(|wanted| {
        cpuinfo.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            let value = value.trim();
            (key.trim() == *wanted && !value.is_empty()).then(|| value.to_owned())
        })
    })
}

/// The CPUs that share a physical core with `cpu` (itself included), where Linux says.
pub fn smt_siblings(cpu: usize) -> Option<Vec<usize>> {
    let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
    parse_cpu_list(std::fs::read_to_string(path).ok()?.trim())
}

/// Parses Linux's CPU list format, such as `0-3,8,10-11`.
pub fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text
        .split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
    {
        let (first, last) = part.split_once('-').unwrap_or((part, part));
        let (first, last): (usize, usize) = (first.parse().ok()?, last.parse().ok()?);
        if first > last {
            return None;
        }
        cpus.extend(first..=last);
    }
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_models_and_lists_parse() {
        let x86 = "processor\t: 0\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) @ 2.50GHz\n";
        assert_eq!(
            cpu_model(x86).as_deref(),
            Some("Intel(R) Xeon(R) @ 2.50GHz")
        );
        assert_eq!(cpu_model("processor\t: 0\nBogoMIPS\t: 50.00\n"), None);
        assert_eq!(parse_cpu_list("0-2,8"), Some(vec![0, 1, 2, 8]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
    }
}
