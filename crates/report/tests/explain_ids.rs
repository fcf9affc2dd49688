//! Every id a result's JSON can carry — each finding's (`Id::ALL`) and each
//! of tune's inferences' (`InferenceId::ALL`) — is known to `poolbench
//! explain ID` and documented on docs/findings.md, and an old finding name
//! still explains the finding it became.
use poolbench_model::findings::Id;
use poolbench_model::InferenceId;
use poolbench_report::{explain_markdown, explain_name};

fn findings_page() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/findings.md");
    std::fs::read_to_string(path).expect("docs/findings.md")
}

#[test]
fn every_finding_id_is_explained_and_documented() {
    let page = findings_page();
    for id in &Id::ALL {
        let name = id.as_str();
        let text = explain_name(name).unwrap_or_else(|| panic!("explain {name}: nothing"));
        assert!(text.starts_with(&format!("{name}: ")), "{text}");
        assert!(text.contains("What to do"), "{text}");
        assert!(
            page.contains(&format!("\n## {name}\n")),
            "docs/findings.md: no {name}"
        );
    }
}

#[test]
fn every_inference_id_is_explained_and_documented() {
    let page = findings_page();
    for id in &InferenceId::ALL {
        let name = id.as_str();
        let text = explain_name(name).unwrap_or_else(|| panic!("explain {name}: nothing"));
        assert!(
            text.contains(&format!("{name}: an inference of `tune`")),
            "{text}"
        );
        let means = id.means().expect("a text");
        assert!(
            page.contains(&format!("\n### inference: {name}\n")) && page.contains(means),
            "docs/findings.md: no inference {name}"
        );
    }
}

#[test]
fn the_page_is_the_generated_one_and_old_names_still_explain() {
    assert!(
        findings_page() == explain_markdown(),
        "docs/findings.md is not `poolbench explain --format markdown`: regenerate it"
    );
    for (old, id) in &Id::RENAMED {
        let text = explain_name(old).unwrap_or_else(|| panic!("explain {old}: nothing"));
        assert!(text.starts_with(&format!("{id}: ")), "{text}");
    }
    assert!(explain_name("no-such-id").is_none());
}
