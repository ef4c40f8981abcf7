from editor.recent import Recent


def test_it_forgets_the_least_recently_used_value_first():
    recent: Recent[str, int] = Recent(2)
    recent.put("a", 1)
    recent.put("b", 2)
    assert recent.get("a") == 1  # "a" is now the most recent
    recent.put("c", 3)
    assert recent.get("b") is None
    assert (recent.get("a"), recent.get("c")) == (1, 3)


def test_putting_a_key_again_replaces_its_value_and_keeps_one_entry():
    recent: Recent[str, int] = Recent(2)
    recent.put("a", 1)
    recent.put("a", 2)
    recent.put("b", 3)
    assert (recent.get("a"), recent.get("b")) == (2, 3)


def test_clear_forgets_everything():
    recent: Recent[str, int] = Recent(2)
    recent.put("a", 1)
    recent.clear()
    assert recent.get("a") is None
