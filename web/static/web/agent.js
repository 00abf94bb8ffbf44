// The agent page's copy buttons: shown only when the clipboard can be written.
(function () {
  "use strict";
  if (!navigator.clipboard || !window.isSecureContext) return;
  document.querySelectorAll("button.copy[data-copy]").forEach(function (button) {
    var source = document.getElementById(button.getAttribute("data-copy"));
    var status = button.parentElement.querySelector(".copied");
    if (!source) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(source.textContent).then(
        function () { if (status) status.textContent = "Copied to the clipboard."; },
        function () { if (status) status.textContent = "Copying failed: select the text instead."; }
      );
    });
  });
})();
