package three

func b() int {
	var c config
	return c.size
}
