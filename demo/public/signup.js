// The sign-up page's only script. Collection starts when the page loads, so it runs while the
// person types; on submit the result goes into the form, which posts to our own backend. The SDK
// sends nothing itself, and a page whose SDK did not load (the service down, an integrity
// mismatch) still signs up, without device data.
const device = window.RiskDevice ? window.RiskDevice.collect() : Promise.resolve(undefined);
const form = document.querySelector('#signup');
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  form.querySelector('button').disabled = true;
  const result = await device;
  if (result) form.elements.device_intelligence.value = JSON.stringify(result);
  form.submit();
});
