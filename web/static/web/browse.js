// Live search on /browse: the page works without this; with it, results follow typing
// and the filters apply as they change. The results are the server's own HTML.
(function () {
  "use strict";
  var form = document.getElementById("search");
  var body = document.getElementById("browse-body");
  if (!form || !body || !window.fetch || !window.DOMParser) return;
  var input = document.getElementById("q");
  var timer = null;
  var pending = null;

  function queryOf() {
    var params = new URLSearchParams();
    new FormData(form).forEach(function (value, key) {
      if (String(value).trim() !== "") params.append(key, value);
    });
    var text = params.toString();
    return "/browse" + (text ? "?" + text : "");
  }

  function load(url) {
    if (pending) pending.abort();
    pending = new AbortController();
    body.setAttribute("aria-busy", "true");
    fetch(url, { signal: pending.signal, headers: { Accept: "text/html" } })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("browse-body");
        if (!fresh) return;
        body.replaceWith(fresh);
        body = fresh;
        document.title = doc.title;
        history.replaceState(null, "", url);
      })
      .catch(function () { /* aborted by newer typing, or offline: the form still works */ })
      .finally(function () { body.removeAttribute("aria-busy"); });
  }

  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { load(queryOf()); }, 250);
  });
  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target.form === form && target !== input) load(queryOf());
  });
})();
