// Command hello is the smallest program the image tests put in an image.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Println("hello from", os.Args[0])
}
