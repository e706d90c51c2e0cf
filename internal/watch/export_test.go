package watch

// RowOf is rowOf, for the external tests.
var RowOf = rowOf

// Same is same, for the external tests.
var Same = same
