// LTI Dynamic Registration: tell the LMS that opened this page that registration is done.
(function () {
  var target = window.opener || window.parent;
  if (target && target !== window) {
    target.postMessage({ subject: "org.imsglobal.lti.close" }, "*");
  }
})();
