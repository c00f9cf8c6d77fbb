module github.com/kvref/kvref

go 1.26.8

require (
	github.com/stretchr/testify v1.12.1
	github.com/x448/float16 v0.8.4
	pgregory.net/rapid v1.3.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
