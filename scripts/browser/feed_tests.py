"""Browser tests of the company feed: an admin sets a feed on Settings and sees its state; Home
shows the entries as safe links, never the feed's markup, and a note for a broken feed.

Imported by run.py (after its helpers are defined); the tests register with its @test.
"""
import http.server
import os
import sys
import threading

from selenium.webdriver.common.by import By

# run.py is usually the main script; when it is imported as a module, it is that one.
run = sys.modules.get("run") or sys.modules["__main__"]

RSS = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0">
  <channel>
    <title>Acme blog</title>
    <item>
      <title>We opened an office in Seville</title>
      <link>https://acme.example/seville</link>
      <guid>seville</guid>
      <pubDate>Tue, 02 Dec 2025 10:00:00 GMT</pubDate>
    </item>
    <item>
      <title>&lt;script&gt;window.__feedScript = 1&lt;/script&gt;&lt;img src=x onerror="window.__feedScript = 2"&gt;Safe title</title>
      <link>javascript:window.__feedScript = 3</link>
      <guid>hostile</guid>
      <pubDate>Mon, 01 Dec 2025 10:00:00 GMT</pubDate>
    </item>
    <item>
      <title><![CDATA[Our <b>yearly</b> report]]></title>
      <link>/report</link>
      <guid>report</guid>
      <pubDate>Sun, 30 Nov 2025 10:00:00 GMT</pubDate>
    </item>
  </channel>
</rss>
"""


class FeedServer:
    """A local feed server on 127.0.0.1, port 0: /rss.xml is a good feed, /broken.xml is not XML."""

    def __init__(self):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/rss.xml":
                    body, kind = RSS.encode(), "application/rss+xml"
                elif self.path == "/broken.xml":
                    body, kind = b"<rss><channel><title>Oops</channel>", "application/xml"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("ETag", '"v1"')
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@run.test
def company_feed_is_set_on_settings_and_shows_on_home_as_safe_links(ctx):
    server = ctx["server"]
    run.create_admin(server)
    feeds = FeedServer()
    try:
        d = ctx["browser"]()
        run.login(d, server, "admin", run.ADMIN_PASSWORD)
        run.screen(d, "home")
        # No feed yet: Home has no feed section at all.
        run.wait_for(d, lambda d: d.find_element(By.ID, "home-notices").get_attribute("aria-busy") == "false")
        assert not d.find_elements(By.ID, "home-feed")

        d.get(server.url + "/#/admin/settings")
        run.screen(d, "admin-settings")
        urls = run.wait_for(d, lambda d: d.find_element(By.ID, "feeds-urls"))
        assert "No company feeds yet." in d.find_element(By.ID, "feeds-list").text
        # A refused address is explained next to the field, by line.
        urls.send_keys("ftp://files.example/feed")
        d.find_element(By.ID, "feeds-save").click()
        error = run.wait_for(d, lambda d: d.find_element(By.ID, "feeds-urls-error"))
        run.wait_for(d, lambda d: error.is_displayed())
        assert error.text == "Line 1: the address must start with http:// or https://.", error.text
        assert urls.get_attribute("aria-invalid") == "true"

        urls.clear()
        urls.send_keys(feeds.url + "/rss.xml\n" + feeds.url + "/broken.xml")
        d.find_element(By.ID, "feeds-save").click()
        run.wait_for(d, lambda d: d.find_element(By.ID, "feeds-status").text == "The feeds have been saved. New ones are read now.")
        # The list is read again while a feed waits for its first read.
        good = f"#feeds-list li[data-url='{feeds.url}/rss.xml']"
        bad = f"#feeds-list li[data-url='{feeds.url}/broken.xml']"
        run.wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, good).get_attribute("data-status") == "ok", timeout=20)
        run.wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, bad).get_attribute("data-status") == "error", timeout=20)
        assert "Acme blog" in d.find_element(By.CSS_SELECTOR, good).text
        assert "Read: 3 entries." in d.find_element(By.CSS_SELECTOR, good).text, d.find_element(By.CSS_SELECTOR, good).text
        assert "Could not be read: the feed is not well-formed XML." in d.find_element(By.CSS_SELECTOR, bad).text
        problems = run.axe_problems(d, "settings with company feeds")
        os.makedirs(ctx["shots"], exist_ok=True)
        d.find_element(By.ID, "feeds-form").screenshot(os.path.join(ctx["shots"], "settings-feeds.png"))

        d.get(server.url + "/#/home")
        run.screen(d, "home")
        section = run.wait_for(d, lambda d: d.find_element(By.ID, "home-feed"))
        assert section.find_element(By.TAG_NAME, "h2").text == "From the company"
        entries = section.find_elements(By.CSS_SELECTOR, "#home-feed-list li")
        assert [run.text_content(e.find_element(By.CSS_SELECTOR, "a, .feed-title")).replace(" (opens in a new tab)", "") for e in entries] == [
            "We opened an office in Seville", "Safe title", "Our yearly report"], [e.text for e in entries]
        links = section.find_elements(By.CSS_SELECTOR, "#home-feed-list a")
        assert [a.get_attribute("href") for a in links] == ["https://acme.example/seville", feeds.url + "/report"]
        for a in links:
            assert a.get_attribute("target") == "_blank" and a.get_attribute("rel") == "noopener noreferrer"
        # The hostile entry is plain text: no link, no element of the feed's, nothing ran.
        assert not entries[1].find_elements(By.TAG_NAME, "a")
        assert not section.find_elements(By.CSS_SELECTOR, "script, img, b")
        assert d.execute_script("return window.__feedScript === undefined")
        assert "Acme blog" in entries[0].text and entries[0].find_elements(By.TAG_NAME, "time")
        # The admin is told which feed is broken and where to fix it.
        note = section.find_element(By.CSS_SELECTOR, f".feed-broken[data-url='{feeds.url}/broken.xml']")
        assert "could not be read: the feed is not well-formed XML." in note.text, note.text
        assert note.find_element(By.TAG_NAME, "a").get_attribute("href").endswith("#/admin/settings")
        problems += run.axe_problems(d, "home with the company feed")
        run.shot(d, ctx, "home-feed")
        section.screenshot(os.path.join(ctx["shots"], "home-feed-section.png"))
        assert not problems, problems

        # An employee sees the entries without the admins' note.
        run.create_employee(server)
        e = ctx["browser"]()
        run.login(e, server, "eve", run.EMPLOYEE_PASSWORD)
        run.screen(e, "home")
        run.wait_for(e, lambda e: len(e.find_elements(By.CSS_SELECTOR, "#home-feed-list li")) == 3)
        assert not e.find_elements(By.CSS_SELECTOR, ".feed-broken")
        run.no_script_errors(d, e)
    finally:
        feeds.stop()
