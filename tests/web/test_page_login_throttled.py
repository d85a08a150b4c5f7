"""The staff pages answer a throttled login with their own page, in the reader's language."""

import re

import pytest


def form_token(client) -> str:
    page = client.get("/login").get_data(as_text=True)
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


@pytest.mark.parametrize(("language", "text"), [("zh-CN", "尝试次数过多"), ("en", "Too many attempts")])
def test_too_many_logins_on_the_page_is_a_page_in_the_readers_language(client, language, text):
    form = {"username": "staff", "password": "wrong", "csrf_token": form_token(client)}
    for _ in range(5):
        client.post("/login", data=form, headers={"Accept-Language": language})
    limited = client.post("/login", data=form, headers={"Accept-Language": language})
    assert limited.status_code == 429 and text in limited.get_data(as_text=True)
    assert limited.headers.get("Retry-After")
