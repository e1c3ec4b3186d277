// Live refresh for the dashboard: every few seconds, fetch the page again and swap in
// the parts marked data-live (totals, open slots, filled slots). Forms being typed into
// are never touched. Without JavaScript the page works the same; it just does not move.
(function () {
  "use strict";
  var seconds = parseInt(document.body.getAttribute("data-refresh-seconds"), 10);
  // The server says which address to refresh from: after a form's answer the address
  // bar holds the form's action, which only takes POST.
  var url = document.body.getAttribute("data-refresh-url");
  if (!(seconds > 0) || !url || url.charAt(0) !== "/" || !window.fetch || !window.DOMParser) {
    return;
  }
  var busy = false;
  function refresh() {
    if (busy || document.visibilityState === "hidden") {
      return;
    }
    busy = true;
    fetch(url, {
      credentials: "same-origin",
      headers: { "Accept": "text/html" },
      cache: "no-store"
    }).then(function (res) {
      if (res.redirected || !res.ok) {
        // Signed out or the session ended: show the sign-in page.
        if (res.redirected) {
          window.location.reload();
        }
        return null;
      }
      return res.text();
    }).then(function (html) {
      if (!html) {
        return;
      }
      var fresh = new DOMParser().parseFromString(html, "text/html");
      document.querySelectorAll("[data-live][id]").forEach(function (el) {
        var next = fresh.getElementById(el.id);
        if (next && !el.contains(document.activeElement) && el.innerHTML !== next.innerHTML) {
          el.innerHTML = next.innerHTML;
        }
      });
      var stamp = fresh.getElementById("updated");
      var mine = document.getElementById("updated");
      if (stamp && mine) {
        mine.textContent = stamp.textContent;
      }
    }).catch(function () {
      // A failed refresh is retried at the next tick.
    }).then(function () {
      busy = false;
    });
  }
  window.setInterval(refresh, seconds * 1000);
})();

// Copy buttons (data-copy names the element whose text they copy): shown only where the
// browser can copy; without them the text still selects whole on a click.
(function () {
  "use strict";
  if (!navigator.clipboard || !navigator.clipboard.writeText) {
    return;
  }
  document.querySelectorAll("button[data-copy]").forEach(function (btn) {
    var source = document.getElementById(btn.getAttribute("data-copy"));
    if (!source) {
      return;
    }
    var label = btn.textContent;
    btn.hidden = false;
    btn.addEventListener("click", function () {
      navigator.clipboard.writeText(source.textContent).then(function () {
        btn.textContent = "Copied";
        window.setTimeout(function () { btn.textContent = label; }, 2000);
      }, function () {
        btn.textContent = "Select the text and copy it";
      });
    });
  });
})();
