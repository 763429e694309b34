#!/bin/sh
env | sort > /output/env
exit 3
