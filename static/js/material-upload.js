// The material upload step (templates/sessions/exam_material.html): sends the form with
// XMLHttpRequest so a long upload shows its progress; the server's answer (the next step, or
// the page with its error) replaces the page. Without JavaScript the form posts as usual.
(function () {
  "use strict";
  const scriptSrc = document.currentScript ? document.currentScript.src : "";
  const form = document.getElementById("material-form");
  if (!form || !window.XMLHttpRequest || !window.FormData) {
    return;
  }
  const box = document.getElementById("material-progress");
  const bar = document.getElementById("material-progress-bar");
  const status = document.getElementById("material-progress-status");

  form.addEventListener("submit", function (event) {
    if (!form.reportValidity()) {
      return;
    }
    event.preventDefault();
    const request = new XMLHttpRequest();
    request.open("POST", form.action || window.location.href);
    box.hidden = false;
    bar.value = 0;
    status.textContent = form.dataset.sending;
    request.upload.addEventListener("progress", function (progress) {
      if (progress.lengthComputable) {
        bar.value = Math.round((100 * progress.loaded) / progress.total);
      }
    });
    request.addEventListener("load", function () {
      if (request.responseURL && request.responseURL !== window.location.href) {
        window.location.assign(request.responseURL);
        return;
      }
      // The same page again, with the error: show its card and move focus to the error.
      const page = new DOMParser().parseFromString(request.responseText, "text/html");
      const fresh = page.querySelector(".journey-card");
      const card = document.querySelector(".journey-card");
      if (!fresh || !card) {
        window.location.reload();
        return;
      }
      card.replaceWith(fresh);
      const errors = document.getElementById("material-errors");
      if (errors) {
        errors.focus();
      }
      const script = document.createElement("script");
      script.src = scriptSrc;
      document.body.appendChild(script);
    });
    request.addEventListener("error", function () {
      status.textContent = form.dataset.failed;
    });
    request.send(new FormData(form));
  });
})();
