package three

type config struct{ size int }

var _ = config{size: limit}
