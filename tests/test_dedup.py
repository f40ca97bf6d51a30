from dreval_assets.core.dedup import duplicate_groups, normalise_claim


def test_exact_and_near_duplicates_collapse_but_different_numbers_do_not():
    texts = [
        "The Lowmarsh ferry carried 41,200 passengers in 2023.",
        "the Lowmarsh ferry carried 41,200 passengers in 2023",          # same after normalising
        "In 2023 the Lowmarsh ferry carried 41,200 passengers.",          # reordered: near duplicate
        "The Lowmarsh ferry carried 58,000 passengers in 2023.",          # different number: distinct
        "Estuary Links added a third vessel named Curlew in March 2023.",
    ]
    assert duplicate_groups(texts) == [0, 0, 0, 3, 4]


def test_normalisation_keeps_numbers_and_drops_punctuation():
    assert normalise_claim("Fares rose 4.5% (in April)!") == "fares rose 4.5 in april"


def test_many_distinct_claims_stay_distinct():
    texts = [f"Crossing {i} took {10 + i % 7} minutes on route {i * 3}." for i in range(400)]
    assert duplicate_groups(texts) == list(range(400))


def test_sandbox_search_finds_the_page_that_speaks_to_the_claim():
    from dreval_assets.core.models import SandboxPage
    from dreval_assets.fetch.search import SandboxSearch

    corpus = [SandboxPage(url="https://n.example", title="Noise", role="noise", text="Rainfall and reservoirs. " * 20),
              SandboxPage(url="https://f.example", title="Ferry", role="supportive",
                          text="The Lowmarsh ferry carried 41,200 passengers in 2023 on the estuary route.")]
    [page] = SandboxSearch().search("The Lowmarsh ferry carried 41,200 passengers in 2023.", corpus)
    assert page.url == "https://f.example"
    assert SandboxSearch().search("Quantum chromodynamics predicts gluon confinement.", corpus) == []


def test_only_ambiguous_pairs_go_to_the_judge_and_its_answer_decides():
    from dreval_assets.core.dedup import ambiguous_pairs

    texts = [
        "The Lowmarsh ferry carried 41,200 passengers in 2023.",
        "In 2023 the Lowmarsh ferry carried 41,200 passengers.",                          # sure duplicate
        "The Lowmarsh ferry service carried 41,200 passengers during 2023 overall.",      # ambiguous
        "Estuary Links added a third vessel named Curlew in March 2023.",                 # unrelated
    ]
    assert ambiguous_pairs(texts) == [(0, 2)]
    asked = []

    def judge(i, j):
        asked.append((i, j))
        return True

    assert duplicate_groups(texts, same=judge) == [0, 0, 0, 3] and asked == [(0, 2)]
    assert duplicate_groups(texts, same=lambda i, j: False) == [0, 0, 2, 3]
    assert duplicate_groups(texts) == [0, 0, 2, 3]  # no judge: ambiguous pairs stay distinct
