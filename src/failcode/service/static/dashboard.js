// failcode dashboard: live updates by polling /ui/live (the interval is shown on the page);
// when new events arrived, the page's main content is fetched again and swapped in place.
(function () {
  "use strict";
  var every = parseInt(document.body.getAttribute("data-poll") || "0", 10);
  var status = document.getElementById("live");
  var alertBox = document.getElementById("regression");
  if (!every || !status) { document.body.setAttribute("data-ready", "1"); return; }
  var events = null;
  var seen = {};
  function stamp() { return new Date().toLocaleTimeString(); }
  function refresh() {
    return fetch(window.location.href, {credentials: "same-origin", headers: {"Accept": "text/html"}})
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) { return; }
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("content");
        var main = document.getElementById("content");
        if (fresh && main) { main.innerHTML = fresh.innerHTML; }
      });
  }
  function showRegressions(list) {
    var shown = list.filter(function (r) { return !seen[r.id + ":" + r.since_us]; });
    list.forEach(function (r) { seen[r.id + ":" + r.since_us] = true; });
    if (!shown.length || events === null) { return; }
    alertBox.textContent = "";
    var text = document.createElement("span");
    text.textContent = "Regression: ";
    alertBox.appendChild(text);
    shown.forEach(function (r, i) {
      var link = document.createElement("a");
      link.href = "/ui/findings/" + r.id;
      link.textContent = r.code + " " + r.message;
      if (i) { alertBox.appendChild(document.createTextNode(", ")); }
      alertBox.appendChild(link);
    });
    alertBox.hidden = false;
    shown.forEach(function (r) {
      var row = document.querySelector('tr[data-finding="' + r.id + '"]');
      if (row) { row.classList.add("fresh"); }
    });
  }
  function poll() {
    fetch("/ui/live", {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (state) {
        if (!state || !state.signed_in) {
          status.textContent = "Live updates stopped: signed out. Reload to sign in.";
          return;
        }
        var changed = events !== null && state.events !== events;
        var first = events === null;
        showRegressions(state.regressions || []);
        events = state.events;
        var work = changed ? refresh() : Promise.resolve();
        return work.then(function () {
          status.textContent = "Live: " + state.events.toLocaleString() + " events · checked " +
            stamp() + " · every " + every + " s" + (changed ? " · updated" : "");
          if (first) { document.body.setAttribute("data-ready", "1"); }
          document.body.setAttribute("data-events", String(state.events));
        });
      })
      .catch(function () { status.textContent = "Live: the service did not answer at " + stamp() + "; trying again in " + every + " s"; })
      .then(function () { window.setTimeout(poll, every * 1000); });
  }
  poll();
})();
