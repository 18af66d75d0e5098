"use strict";
document.addEventListener("keydown", function (event) {
  var form = document.getElementById("fix");
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && form) {
    event.preventDefault();
    if (form.requestSubmit) { form.requestSubmit(); } else { form.submit(); }
    return;
  }
  var target = event.target;
  var typing = target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT" || target.isContentEditable);
  if (typing || event.ctrlKey || event.metaKey || event.altKey) { return; }
  var rel = event.key === "n" || event.key === "j" ? "next" : event.key === "p" || event.key === "k" ? "prev" : null;
  if (rel) {
    var link = document.querySelector('a[rel="' + rel + '"]');
    if (link) { event.preventDefault(); window.location.href = link.href; }
  }
});
