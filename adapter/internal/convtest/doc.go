// Package convtest holds the helpers the conversion tests of the model
// API adapters (agtanthropic, agtopenai and its agtresponses
// package) share: the JSON an SDK value encodes to, a comparison of two
// JSON texts as values, and the cases every adapter is tested on alike
// (images at and past its size bound, the roots of input schemas, the
// golden conversion of every content kind).
//
//	got := convtest.JSON(t, agtanthropic.Tools(tools))
//	convtest.SameJSON(t, got, `[{"name":"noargs","input_schema":{"type":"object"}}]`)
//
// It is for tests only: every function that can fail takes the test's
// testing.TB and fails the test, but for what the adapters' Examples use
// (which have none): a model API scripted on 127.0.0.1 (NewAPI) and a Run
// over the fake server (ExampleRun). Like modelconv, it belongs to the root
// module and is internal to the adapters.
package convtest
