// A gRPC server nobody here wrote the handler stack of: grpc-go's server
// with the helloworld.Greeter from google.golang.org/grpc/examples, whose
// unary SayHello sleeps 500 ms before it answers. It is what poolbench's
// grpc:// target calls by default (helloworld.Greeter/SayHello with
// {"name": "poolbench"}); bench/tune-accuracy.sh's grpc-slow service.
//
//	go build -o grpc-slow . && ./grpc-slow [-delay 500ms] [-listen 127.0.0.1:0]
//
// No limit on concurrent streams beyond grpc-go's default (none): every
// call in flight sleeps on its own goroutine, so the service's throughput
// is (calls in flight) / 500 ms. Prints `grpc 127.0.0.1:PORT` as its first
// line once listening; stops on SIGTERM or SIGINT.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	pb "google.golang.org/grpc/examples/helloworld/helloworld"
)

type greeter struct {
	pb.UnimplementedGreeterServer
	delay time.Duration
}

func (g *greeter) SayHello(ctx context.Context, in *pb.HelloRequest) (*pb.HelloReply, error) {
	select {
	case <-time.After(g.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &pb.HelloReply{Message: "Hello " + in.GetName()}, nil
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	delay := flag.Duration("delay", 500*time.Millisecond, "time SayHello takes")
	flag.Parse()

	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	s := grpc.NewServer()
	pb.RegisterGreeterServer(s, &greeter{delay: *delay})
	fmt.Printf("grpc %s\n", lis.Addr())
	os.Stdout.Sync()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		s.Stop()
	}()
	if err := s.Serve(lis); err != nil {
		log.Fatalf("serve: %v", err)
	}
}
