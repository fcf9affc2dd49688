//! deploy/kubernetes checked without a cluster: the Job against the
//! Kubernetes API's schemas (kubernetes-validate) and every shard's
//! arguments against this binary (`deploy/kubernetes/validate.sh`); and
//! manifests that would go wrong refused, each for its reason.
use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_poolbench");

fn deploy() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy/kubernetes")
}

/// validate.sh on `job`: its exit code and what it printed.
fn validate(job: Option<&PathBuf>) -> (i32, String) {
    let out = Command::new(deploy().join("validate.sh"))
        .args(job)
        .env("POOLBENCH", BIN)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn the_job_is_valid_and_its_shards_run_one_plan() {
    let (code, text) = validate(None);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("valid (Kubernetes schema, strict), 4 shards of plan"),
        "{text}"
    );
    for i in 0..4 {
        assert!(
            text.contains(&format!("shard {i}/4: pool:64 c=128")),
            "{text}"
        );
    }
    assert!(text.contains("runs pool:16 c=32"), "{text}");
}

#[test]
fn broken_jobs_are_refused_for_their_reason() {
    let job = std::fs::read_to_string(deploy().join("job.yaml")).unwrap();
    let cases = [
        (
            "parallelism: 4",
            "parallelism: 3",
            "and --shard .../4 differ",
        ),
        (
            "completionMode: Indexed",
            "completionMod: Indexed",
            "'completionMod' was unexpected",
        ),
        (
            "            - pool:64",
            "            - pool:0",
            "shard 0: poolbench",
        ),
        (
            "            - \"128\"",
            "            - \"2\"",
            "leaves shard 2 nothing to run",
        ),
        (
            "backoffLimit: 0",
            "backoffLimit: 3",
            "backoffLimit must be 0",
        ),
        (
            "prometheus.io/port: \"9464\"",
            "prometheus.io/port: \"9465\"",
            "--metrics-listen port 9464 must be a containerPort",
        ),
    ];
    for (i, (from, to, why)) in cases.iter().enumerate() {
        assert!(job.contains(from), "{from}");
        let path =
            std::env::temp_dir().join(format!("poolbench-{}-job{i}.yaml", std::process::id()));
        std::fs::write(&path, job.replacen(from, to, 1)).unwrap();
        let (code, text) = validate(Some(&path));
        let _ = std::fs::remove_file(&path);
        assert_ne!(code, 0, "{to}: accepted\n{text}");
        assert!(text.contains(why), "{to}: {text}");
    }
}
